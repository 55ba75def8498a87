# Sourced by .ci/run (or by hand, `. scripts/use-node.sh`, from any folder): puts the project's Node (the major in
# .nvmrc) first on PATH, installing it on first use (scripts/project-node.mjs). nvm, fnm and Volta read .nvmrc directly.
# The checkout is found from this file's own path (bash, zsh), else the working directory (other shells cannot say).
if [ -n "${BASH_VERSION:-}" ]; then
  eval 'tally_here=${BASH_SOURCE[0]}'
elif [ -n "${ZSH_VERSION:-}" ]; then
  eval 'tally_here=${(%):-%x}'
else
  tally_here=scripts/use-node.sh
fi
tally_root="$(cd "$(dirname "$tally_here")/.." 2>/dev/null && pwd)"
if [ ! -f "$tally_root/scripts/project-node.mjs" ]; then
  echo "use-node.sh: cannot find the Tally checkout from here; source it from the checkout (cd /path/to/tally && . scripts/use-node.sh), or from bash or zsh by its path" >&2
  tally_node_bin=
  tally_status=1
else
  # Fails with its reason in one line (project-node.mjs); the Node on PATH then stays as it was.
  tally_node_bin="$(node "$tally_root/scripts/project-node.mjs")"
  tally_status=$?
fi
if [ "$tally_status" -eq 0 ] && [ -n "$tally_node_bin" ]; then export PATH="$tally_node_bin:$PATH"; fi
unset tally_here tally_root tally_node_bin
# `return` ends a sourced script with its status (`exit` would close the shell that sourced it).
if [ "$tally_status" -eq 0 ]; then
  unset tally_status
  return 0 2>/dev/null || true
else
  unset tally_status
  return 1 2>/dev/null || exit 1
fi

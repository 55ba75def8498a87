# Sourced by .ci/run (or by hand, `. scripts/use-node.sh`): puts the project's Node (the major in .nvmrc)
# first on PATH, installing it on first use (scripts/project-node.mjs). nvm, fnm and Volta read .nvmrc directly.
tally_node_bin="$(node scripts/project-node.mjs)"
if [ -n "$tally_node_bin" ]; then export PATH="$tally_node_bin:$PATH"; fi
unset tally_node_bin

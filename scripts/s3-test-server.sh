#!/usr/bin/env bash
# A disposable S3 server for the studio tests: Ceph's RADOS Gateway over a one-monitor, one-OSD cluster kept in
# memory, listening on loopback only, with no cluster authentication. Debian packages: radosgw ceph-mon ceph-osd
# (.ci/run installs them with --no-install-recommends).
#
#   scripts/s3-test-server.sh DIR MON_PORT RGW_PORT
#
# DIR must be empty or absent; everything (config, logs, pid files) lives in it. Prints one line,
# "ready http://127.0.0.1:RGW_PORT", once the gateway answers and the test user exists (access key
# TALLYTEST, secret TALLYTESTSECRET). Stop it by killing the pids in DIR/run/*.pid.
set -euo pipefail
dir=${1:?usage: s3-test-server.sh DIR MON_PORT RGW_PORT}
mon_port=${2:?MON_PORT}
rgw_port=${3:?RGW_PORT}
mkdir -p "$dir"/run "$dir"/log "$dir"/mon "$dir"/osd/ceph-0
conf="$dir/ceph.conf"
cluster_id=$(cat /proc/sys/kernel/random/uuid)

cat >"$conf" <<EOF
[global]
fsid = $cluster_id
mon host = v1:127.0.0.1:$mon_port
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
keyring = $dir/keyring
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
[mon]
mon data = $dir/mon/ceph-\$id
[osd]
osd data = $dir/osd/ceph-\$id
osd objectstore = memstore
memstore device bytes = 2147483648
osd max object name len = 460
osd max object namespace len = 64
# Without these two the OSD tries to update its own class and location at start and never comes up here.
osd class update on start = false
osd crush update on start = false
[client.rgw.test]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $dir/rgw
EOF

ceph_args=(-c "$conf")
ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$dir/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
monmaptool --create --addv a "[v1:127.0.0.1:$mon_port]" --fsid "$cluster_id" "$dir/monmap" >/dev/null
ceph-mon "${ceph_args[@]}" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring"
ceph-mon "${ceph_args[@]}" -i a

# The OSD's identity: registered with the monitor first, then its store is made with the same uuid.
osd_uuid=$(cat /proc/sys/kernel/random/uuid)
osd_id=$(ceph "${ceph_args[@]}" osd new "$osd_uuid")
ceph-osd "${ceph_args[@]}" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" 2>>"$dir/log/osd-mkfs.log"
ceph "${ceph_args[@]}" osd crush add "osd.$osd_id" 1.0 root=default >/dev/null
ceph-osd "${ceph_args[@]}" -i "$osd_id" 2>>"$dir/log/osd.stderr"

wait_for() { # seconds, then a command that succeeds once the thing is up
  local left=$(($1 * 10)); shift
  until "$@" >/dev/null 2>&1; do
    left=$((left - 1))
    if [ "$left" -le 0 ]; then echo "s3-test-server: gave up waiting for: $*" >&2; exit 1; fi
    sleep 0.1
  done
}
osd_up() { ceph "${ceph_args[@]}" osd stat | grep -q '1 up'; }
wait_for 60 osd_up
radosgw "${ceph_args[@]}" -n client.rgw.test
wait_for 120 curl -sf -o /dev/null "http://127.0.0.1:$rgw_port/"
radosgw-admin "${ceph_args[@]}" user create --uid tally-test --display-name "Tally tests" \
  --access-key TALLYTEST --secret TALLYTESTSECRET >/dev/null
echo "ready http://127.0.0.1:$rgw_port"

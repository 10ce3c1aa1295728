#!/usr/bin/env bash
# The shared federation benchmark's final table (issue 45), one command:
#   bench/load/shared_federation.sh            # RUNS=4, this checkout, defaults (guard on)
#   bench/load/shared_federation.sh check      # the answers only (no load)
# GW Router with its defaults (connection guard on) with dedup on and off, beside
# Hive Gateway + Rust QP with dedup on and off, alternated in each of RUNS runs,
# on a copy of the installed harness (FED_DIR, default /tmp/ps-fed, left as is).
# Goals: dedup on median ≥ 9× Hive over the runs, dedup off ≥ 5× in each, peak
# RSS ≤ 256 MiB. The harness prints one row per run and a summary at the end
# (node lib/report.mjs); rows marked NOISY had foreign CPU above 10 %.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
fed=${FED_DIR:-/tmp/ps-fed}
copy=${COPY_DIR:-/tmp/fed-final-$$}
[[ -x $fed/run.sh ]] || { echo "no harness at $fed (see /work/shared/bench/federation/README.md)" >&2; exit 2; }
mkdir -p "$copy"
for entry in "$fed"/*; do
  case ${entry##*/} in
    node_modules) ln -s "$entry" "$copy/node_modules" ;; # 680 MB, read only
    results) ;;
    *) cp -a "$entry" "$copy/" ;;
  esac
done
cat >"$copy/gateways/gw-router-nodedupe.sh" <<'SH'
#!/usr/bin/env bash
# GW Router with in-flight deduplication off (otherwise its defaults).
GW_ROUTER_CONFIG_EXTRA="engine: { enable_single_flight: false }" exec "$(dirname "$0")/gw-router.sh" "$@"
SH
chmod +x "$copy/gateways/gw-router-nodedupe.sh"
cd "$copy"
if [[ ${1:-} == check ]]; then # correctness of both GW targets only, no load
  GW_ROUTER_DIR="$root" ./run.sh check gw-router
  GW_ROUTER_DIR="$root" ./run.sh check gw-router-nodedupe
  exit
fi
GW_ROUTER_DIR="$root" RUNS="${RUNS:-4}" ./run.sh gw-router hive-gateway-router-runtime \
  gw-router-nodedupe hive-gateway-router-runtime-nodedupe
node lib/report.mjs
node lib/report.mjs --summary
echo "results: $copy/results"

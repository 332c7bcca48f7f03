#!/usr/bin/env bash
# engine serve's speed (issue 57), side by side in one invocation:
#  - the time to index N saved results from nothing (goal: 10,000 in ≤ 10 s)
#    and to start again over an index in step;
#  - the search page (`/results?q=…`) under 32 concurrent clients for 30 s
#    (wrk): median and p99 latency (goal p99 ≤ 50 ms on 2 cores), requests/s;
#  - the same page's bytes as a static file served by nginx, the reference,
#    alternating with engine round by round;
#  - the server's peak memory after the load (goal ≤ 200 MB).
# Needs a release build (cargo build --release -p engine), wrk and nginx
# (Debian: apt-get install wrk nginx-light), python3.
# Usage: scripts/bench-serve.sh [--results N] [--hosts H] [--seconds S] [--rounds R]
set -euo pipefail
cd "$(dirname "$0")/.."
results=10000 hosts=8 seconds=30 rounds=3
while (($#)); do
  case "$1" in
    --results) results=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
engine=${ENGINE:-target/release/engine}
[ -x "$engine" ] || { echo "no $engine: cargo build --release -p engine" >&2; exit 1; }
for t in wrk nginx python3; do
  command -v $t >/dev/null || { echo "needs $t (apt-get install wrk nginx-light python3)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/bench-serve.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "making $results saved results of $hosts hosts each…"
python3 scripts/serve-fixture.py "$work/home/results" --many "$results" --hosts "$hosts"
du -sh "$work/home/results" | awk '{print "  " $1 " of result files"}'

# Starts engine serve; waits for its start line; prints "PID SECONDS".
start() {
  local p=$1 t0 pid
  t0=$(date +%s.%N)
  ENGINE_HOME=$work/home "$engine" serve --bind "127.0.0.1:$p" --log off 2>"$work/serve.log" &
  pid=$!
  until grep -q "serving" "$work/serve.log" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.01
  done
  echo "$pid $(echo "$(date +%s.%N) - $t0" | bc)"
}
stop() { kill -TERM "$1"; wait "$1" 2>/dev/null || true; }

echo "indexing (3 times from nothing, then once over an index in step)…"
cold=()
for i in 1 2 3; do
  rm -f "$work"/home/results/.engine-index.sqlite*
  read -r pid secs < <(start "$(port)")
  cold+=("$secs"); stop "$pid"
done
read -r pid warm < <(start "$(port)"); stop "$pid"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf "  index %d results from nothing: median %.2f s (%s)\n" "$results" "$(median "${cold[@]}")" "${cold[*]}"
printf "  start over an index in step:   %.2f s\n" "$warm"

# The page under load, and its bytes as a static file behind nginx.
ep=$(port); read -r epid _ < <(start "$ep"); pids+=("$epid")
path="/results?q=node-3&sort=newest"
curl -sf "http://127.0.0.1:$ep$path" > "$work/page.html"
echo "  the search page: $(wc -c < "$work/page.html") bytes, $(grep -c '<tr>' "$work/page.html") rows"
np=$(port)
mkdir -p "$work/nginx/www" "$work/nginx/tmp"
cp "$work/page.html" "$work/nginx/www/results.html"
cat > "$work/nginx/nginx.conf" <<EOF
daemon off; worker_processes 2; pid $work/nginx/nginx.pid; error_log $work/nginx/error.log;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $work/nginx/tmp; proxy_temp_path $work/nginx/tmp;
  fastcgi_temp_path $work/nginx/tmp; uwsgi_temp_path $work/nginx/tmp; scgi_temp_path $work/nginx/tmp;
  server { listen 127.0.0.1:$np; root $work/nginx/www; location / { try_files /results.html =404; } } }
EOF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" & pids+=($!)
sleep 0.5

# wrk's latency line in milliseconds (it prints us, ms or s).
ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) print v/1000; else if (v ~ /ms$/) print v+0; else print v*1000 }'; }
load() {
  local out; out=$(wrk -t2 -c32 -d"${seconds}s" --latency "$1")
  local p50 p99 rps
  p50=$(echo "$out" | awk '$1=="50%" {print $2}'); p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  echo "$(ms "$p50") $(ms "$p99") $rps"
}
e50=() e99=() erps=() n50=() n99=() nrps=()
for r in $(seq "$rounds"); do
  read -r a b c < <(load "http://127.0.0.1:$ep$path"); e50+=("$a"); e99+=("$b"); erps+=("$c")
  read -r a b c < <(load "http://127.0.0.1:$np/results"); n50+=("$a"); n99+=("$b"); nrps+=("$c")
  printf "  round %d: engine p50 %s ms p99 %s ms %s req/s | nginx p50 %s ms p99 %s ms %s req/s\n" "$r" \
    "${e50[-1]}" "${e99[-1]}" "${erps[-1]}" "${n50[-1]}" "${n99[-1]}" "${nrps[-1]}"
done
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$epid/status")
E50=$(median "${e50[@]}") E99=$(median "${e99[@]}") ERPS=$(median "${erps[@]}")
N50=$(median "${n50[@]}") N99=$(median "${n99[@]}") NRPS=$(median "${nrps[@]}")
echo
echo "search page, 32 clients × ${seconds} s, median of $rounds alternating rounds:"
printf "  engine serve: p50 %.2f ms, p99 %.2f ms, %.0f req/s\n" "$E50" "$E99" "$ERPS"
printf "  nginx static: p50 %.2f ms, p99 %.2f ms, %.0f req/s\n" "$N50" "$N99" "$NRPS"
printf "  ratio engine/nginx: p50 %.1f×, p99 %.1f×, throughput %.2f×\n" \
  "$(echo "$E50 / $N50" | bc -l)" "$(echo "$E99 / $N99" | bc -l)" "$(echo "$ERPS / $NRPS" | bc -l)"
printf "  engine serve peak memory: %.1f MB (goal ≤ 200 MB)\n" "$(echo "$hwm * 1024 / 1000000" | bc -l)"
printf "  goals: index ≤ 10 s: %s; p99 ≤ 50 ms: %s\n" \
  "$(echo "$(median "${cold[@]}") <= 10" | bc -l | sed 's/1/met/;s/0/missed/')" \
  "$(echo "$E99 <= 50" | bc -l | sed 's/1/met/;s/0/missed/')"

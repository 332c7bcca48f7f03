#!/usr/bin/env bash
# engine serve's speed (issue 57), side by side in one invocation:
#  - the time to index N saved results from nothing (goal: 10,000 in ≤ 10 s)
#    and to start again over an index in step;
#  - under 32 concurrent clients for S seconds each (wrk), median and p99
#    latency (goal p99 ≤ 50 ms on 2 cores) and requests/s of
#      "search": one search page asked again and again (made once, then
#                 kept until a result changes),
#      "distinct": a different search every request (q=run-NNNNN, per=10…1000:
#                 made every time),
#      "everything": a different page every request of a search that
#                 matches every result (the worst case: made every time);
#  - the search page's bytes as a static file served by nginx, the
#    reference, alternating with engine round by round;
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
echo "  the search page: $(wc -c < "$work/page.html") bytes, $(grep -o '<tr>' "$work/page.html" | wc -l) rows"
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

cat > "$work/distinct.lua" <<EOF
request = function()
  return wrk.format("GET", string.format("/results?q=run-%05d&per=%d", math.random(0, $((results - 1))), math.random(10, 1000)))
end
EOF
cat > "$work/everything.lua" <<EOF
request = function()
  return wrk.format("GET", string.format("/results?q=node&page=%d&per=%d", math.random(1, 100), math.random(10, 100)))
end
EOF

# wrk's latency line in milliseconds (it prints us, ms or s).
ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) print v/1000; else if (v ~ /ms$/) print v+0; else print v*1000 }'; }
load() {
  local out; out=$(wrk -t2 -c32 -d"${seconds}s" --latency "$@")
  local p50 p99 rps
  p50=$(echo "$out" | awk '$1=="50%" {print $2}'); p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  echo "$(ms "$p50") $(ms "$p99") $rps"
}
e50=() e99=() erps=() n50=() n99=() nrps=() d50=() d99=() drps=() w50=() w99=() wrps=()
for r in $(seq "$rounds"); do
  read -r a b c < <(load "http://127.0.0.1:$ep$path"); e50+=("$a"); e99+=("$b"); erps+=("$c")
  read -r a b c < <(load "http://127.0.0.1:$np/results"); n50+=("$a"); n99+=("$b"); nrps+=("$c")
  read -r a b c < <(load -s "$work/distinct.lua" "http://127.0.0.1:$ep"); d50+=("$a"); d99+=("$b"); drps+=("$c")
  read -r a b c < <(load -s "$work/everything.lua" "http://127.0.0.1:$ep"); w50+=("$a"); w99+=("$b"); wrps+=("$c")
  printf "  round %d: search p99 %s ms | nginx p99 %s ms | distinct p99 %s ms | everything p99 %s ms\n" "$r" \
    "${e99[-1]}" "${n99[-1]}" "${d99[-1]}" "${w99[-1]}"
done
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$epid/status")
row() { printf "  %-28s p50 %7.2f ms  p99 %7.2f ms  %7.0f req/s\n" "$1" "$(median "${@:2:$rounds}")" \
  "$(median "${@:$((2 + rounds)):$rounds}")" "$(median "${@:$((2 + 2 * rounds)):$rounds}")"; }
echo
echo "32 clients × ${seconds} s, medians of $rounds alternating rounds ($results results):"
row "engine: the search page" "${e50[@]}" "${e99[@]}" "${erps[@]}"
row "nginx: it as a static file" "${n50[@]}" "${n99[@]}" "${nrps[@]}"
row "engine: distinct searches" "${d50[@]}" "${d99[@]}" "${drps[@]}"
row "engine: distinct everything" "${w50[@]}" "${w99[@]}" "${wrps[@]}"
E99=$(median "${e99[@]}") N99=$(median "${n99[@]}") D99=$(median "${d99[@]}")
printf "  ratio engine/nginx on the search page: p99 %.1f×, throughput %.2f×\n" \
  "$(echo "$E99 / $N99" | bc -l)" "$(echo "$(median "${erps[@]}") / $(median "${nrps[@]}")" | bc -l)"
printf "  engine serve peak memory: %.1f MB (goal ≤ 200 MB)\n" "$(echo "$hwm * 1024 / 1000000" | bc -l)"
verdict() { [ "$(echo "$1" | bc -l)" = 1 ] && echo met || echo missed; }
printf "  goals: index ≤ 10 s: %s; search p99 ≤ 50 ms: %s; distinct searches p99 ≤ 50 ms: %s\n" \
  "$(verdict "$(median "${cold[@]}") <= 10")" "$(verdict "$E99 <= 50")" "$(verdict "$D99 <= 50")"

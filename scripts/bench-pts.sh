#!/usr/bin/env bash
# The real Phoronix Test Suite beside engine (issue 59): PTS's own test
# definitions (../shared/fixtures/pts-profiles, as PTS ships them) installed
# locally the way its users do offline — the same wrapper scripts, only
# install.sh pointed at Debian's fs_mark, dbench, postmark, fio and sqlite3
# instead of building them — then PTS and engine run alternately (a random
# order each round) on one ext4 file system on a loop device
# (--direct-io=on) made for the run. Per test it prints both means, the
# paired ratio engine / PTS with its 95 % interval, and each tool's wall
# time for equal precision (wall time × the squared relative standard error
# of its mean; the ratio says how much of PTS's time engine needs).
#
# Needs root (the loop device; PTS as root reads /etc/phoronix-test-suite.xml,
# which is set aside and put back), php-cli and php-xml, and a PTS checkout:
#   apt-get install php-cli php-xml fsmark dbench postmark fio sqlite3
#   git clone --branch v10.8.4 https://github.com/phoronix-test-suite/phoronix-test-suite
# Usage: scripts/bench-pts.sh --pts DIR [--profiles DIR] [--rounds R] [--trials T]
#          [--tests fs-mark,sqlite,postmark,fio,dbench] [--image-dir DIR] [--size SIZE]
#   --tests: fs-mark is PTS 1.0.3 as shipped (20 loops) against engine's
#   PTS-labelled entry (one loop: the seeds' definition); fs-mark-1 both at
#   one loop (PTS's wrapper given `-L 1`): the harnesses alone.
#   --profiles: the PTS test-profile folders (default ../shared/fixtures/pts-profiles).
#   Defaults: 3 rounds of 3 trials, fs-mark and sqlite (the two tests whose
#   gaps issue 59 explains); postmark, fio and dbench are long by PTS's
#   definitions (fio 85 s a trial, dbench 600 s). The image (24G by
#   default: PTS's fs-mark writes 20 loops of 1000 × 1 MiB before removing
#   them) is a sparse file in --image-dir (default /var/tmp; /dev/shm puts
#   it in memory, where PTS drops SQLite: its trials take under 2 s).
set -euo pipefail
cd "$(dirname "$0")/.."
PTS=${PTS_DIR:-}
ROUNDS=3
TRIALS=3
TESTS=fs-mark,sqlite
IMAGE_DIR=/var/tmp
SIZE=24G
FIXTURES=""
while (($#)); do
  case "$1" in
    --pts) PTS=$(realpath "$2"); shift 2 ;;
    --profiles) FIXTURES=$(realpath "$2"); shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --trials) TRIALS=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    --image-dir) IMAGE_DIR=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$FIXTURES" ] || FIXTURES=$(realpath ../shared/fixtures/pts-profiles)
for p in fs-mark-1.0.3 sqlite-2.3.0 dbench-1.0.2 postmark-1.1.2 fio-2.2.0; do
  [ -f "$FIXTURES/$p/test-definition.xml" ] || { echo "no PTS profile $p in $FIXTURES (--profiles DIR)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root (a loop device and PTS's /etc config)" >&2; exit 2; }
[ -n "$PTS" ] && [ -x "$PTS/phoronix-test-suite" ] || {
  echo "needs a PTS checkout: --pts DIR (git clone --branch v10.8.4 https://github.com/phoronix-test-suite/phoronix-test-suite)" >&2
  exit 2
}
command -v php >/dev/null && php -m | grep -i '^dom$' >/dev/null || { echo "needs php-cli and php-xml (apt-get install php-cli php-xml)" >&2; exit 2; }
for t in ${TESTS//,/ }; do
  case $t in
    fs-mark | fs-mark-1) need=fs_mark ;; sqlite) need=sqlite3 ;; dbench) need=dbench ;; postmark) need=postmark ;; fio) need=fio ;;
    *) echo "unknown test $t (fs-mark, fs-mark-1, sqlite, dbench, postmark, fio)" >&2; exit 2 ;;
  esac
  command -v "$need" >/dev/null || { echo "$t needs $need (apt-get install ${need/fs_mark/fsmark})" >&2; exit 2; }
done
cargo build --release --quiet
ENGINE=${CARGO_TARGET_DIR:-$PWD/target}/release/engine

work=$(mktemp -d)
mnt=$work/mnt
loop=""
image=""
child=""
config=/etc/phoronix-test-suite.xml
saved=$config.engine-bench-pts-saved
# Cleanup goes on past a failing step: the user's PTS config comes back
# first, a busy mount is detached lazily, nothing is removed across mounts.
cleanup() {
  set +e
  if [ -n "$child" ]; then
    # The run's own process group: PTS, engine and the tools they started.
    kill -TERM -- "-$child" 2>/dev/null
    for _ in $(seq 50); do kill -0 -- "-$child" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$child" 2>/dev/null
  fi
  if [ -e "$saved" ] || [ -L "$saved" ]; then
    rm -f "$config"
    mv -T "$saved" "$config"
  elif [ -e "$work/config.ours" ]; then
    rm -f "$config"
  fi
  if mountpoint -q "$mnt"; then umount "$mnt" || umount -l "$mnt"; fi
  [ -n "$loop" ] && losetup -d "$loop"
  [ -n "$image" ] && rm -f "$image"
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The user's own config (or a link of that name) is moved aside whole,
# never written through, and put back as it was.
if [ -e "$config" ] || [ -L "$config" ]; then
  [ -e "$saved" ] || [ -L "$saved" ] && { echo "$saved exists: an earlier run's copy of your PTS config; put it back first" >&2; exit 2; }
  mv -T "$config" "$saved"
fi
python3 - "$IMAGE_DIR" "$SIZE" <<'PY'
import os, re, sys
d, size = sys.argv[1], sys.argv[2]
m = re.fullmatch(r"(\d+)([KMGT]?)", size)
if not m:
    sys.exit(f"--size {size}: a number with K, M, G or T (as truncate takes it)")
need = int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")
st = os.statvfs(d)
if st.f_bavail * st.f_frsize < need:
    sys.exit(f"{d} has {st.f_bavail * st.f_frsize / 1e9:.1f} GB free, the image may take {need / 1e9:.1f} GB (--image-dir, --size)")
PY
image=$(mktemp "$IMAGE_DIR/engine-bench-pts.XXXXXX.img")
truncate -s "$SIZE" "$image"
loop=$(losetup --find --show --direct-io=on "$image")
# Inode tables and journal written now: ext4's lazy init would write them
# in the background under the first tests (an in-memory image's first
# SQLite trials took twice as long behind it).
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
mkdir -p "$mnt" && mount "$loop" "$mnt"
mkdir -p "$mnt/pts" "$mnt/engine"
user=$work/pts-user
mkdir -p "$user/test-profiles/local" "$user/test-results"

# PTS's definitions, downloads left out and install.sh pointed at Debian's
# programs; every wrapper is PTS's own but for the program's path.
local_profile() { # NAME-VERSION
  local p=$user/test-profiles/local/$1
  cp -r "$FIXTURES/$1" "$p"
  rm -f "$p/downloads.xml" "$p/generated.json" "$p/changelog.json"
  echo "$p"
}
# A local profile's install.sh: PRELUDE, then the lines of PTS's own
# install.sh that write WRAPPER (from `echo "#!/bin/SHELL` to `> WRAPPER`)
# through SED (the tool from PATH instead of PTS's build of it).
wrapper_install() { # DIR FIXTURE PRELUDE SHELL WRAPPER SED
  {
    echo '#!/bin/sh'
    echo "$3"
    sed -n "/^echo \"#!\/bin\/$4/,/> $5\$/p" "$FIXTURES/$2/install.sh" | sed "$6"
    echo "chmod +x $5"
    echo 'echo 0 > ~/install-exit-status'
  } >"$1/install.sh"
}
p=$(local_profile fs-mark-1.0.3)
cat >"$p/install.sh" <<'EOF'
#!/bin/sh
mkdir -p fs_mark-3.3/scratch
printf '%s\n' '#!/bin/sh' 'cd fs_mark-3.3/' 'mkdir scratch' 'fs_mark $@ > $LOG_FILE 2>&1' \
  'echo $? > ~/test-exit-status' 'rm -rf scratch' > ~/fs-mark
chmod +x ~/fs-mark
echo 0 > ~/install-exit-status
EOF
p=$(local_profile sqlite-2.3.0)
# The statements engine's profile writes (PTS's come in a tarball that is
# not reachable here): both tools insert the same rows.
awk -v n=2500 -v q="'" 'BEGIN {
  x = 1
  for (i = 1; i <= n; i++) {
    x = (x * 48271) % 2147483647; f1 = 1000 + x % 9000
    x = (x * 48271) % 2147483647; hi = 10000000 + x % 90000000
    x = (x * 48271) % 2147483647; lo = x % 100000000
    f2 = sprintf("%d%08d", hi, lo)
    print "INSERT INTO " q "pts1" q " (" q "I" q ", " q "DT" q ", " q "F1" q ", " q "F2" q ") VALUES (" q i q ", CURRENT_TIMESTAMP, " q f1 q ", " q f2 q ");"
  }
}' >"$p/sqlite-2500-insertions.txt"
# PTS's install.sh writes sqlite-benchmark; the same lines, sqlite3 from PATH.
wrapper_install "$p" sqlite-2.3.0 "cp '$p/sqlite-2500-insertions.txt' ." bash sqlite-benchmark 's#\./sqlite_/bin/sqlite3#sqlite3#g'
p=$(local_profile dbench-1.0.2)
cat >"$p/install.sh" <<'EOF'
#!/bin/sh
cp /usr/share/dbench/client.txt . 2>/dev/null || zcat /usr/share/dbench/client.txt.gz > client.txt
printf '%s\n' '#!/bin/sh' 'dbench $@ -c client.txt > $LOG_FILE 2>&1' 'echo $? > ~/test-exit-status' > dbench
chmod +x dbench
echo 0 > ~/install-exit-status
EOF
p=$(local_profile postmark-1.1.2)
wrapper_install "$p" postmark-1.1.2 'mkdir -p postmark-1.51' sh postmark 's#\./postmark benchmark#postmark benchmark#'
p=$(local_profile fio-2.2.0)
wrapper_install "$p" fio-2.2.0 'mkdir -p fio-fio-3.40' sh fio-run 's#\./fio test\.fio#fio test.fio#'

touch "$work/config.ours"
cat >"$config" <<EOF
<?xml version="1.0"?>
<PhoronixTestSuite><Options>
  <OpenBenchmarking><AnonymousUsageReporting>FALSE</AnonymousUsageReporting><AllowResultUploadsToOpenBenchmarking>FALSE</AllowResultUploadsToOpenBenchmarking></OpenBenchmarking>
  <Installation><EnvironmentDirectory>$mnt/pts/</EnvironmentDirectory><CacheDirectory>$user/download-cache/</CacheDirectory></Installation>
  <Testing><ResultsDirectory>$user/test-results/</ResultsDirectory></Testing>
  <TestResultValidation><DynamicRunCount>FALSE</DynamicRunCount></TestResultValidation>
  <Networking><NoNetworkCommunication>TRUE</NoNetworkCommunication></Networking>
  <BatchMode><SaveResults>TRUE</SaveResults><OpenBrowser>FALSE</OpenBrowser><UploadResults>FALSE</UploadResults><PromptForTestIdentifier>FALSE</PromptForTestIdentifier><PromptForTestDescription>FALSE</PromptForTestDescription><PromptSaveName>FALSE</PromptSaveName><RunAllTestCombinations>FALSE</RunAllTestCombinations><Configured>TRUE</Configured></BatchMode>
</Options></PhoronixTestSuite>
EOF

export ENGINE_HOME=$work/engine-home
# In a process group of its own, in the background and waited for: Ctrl-C
# and SIGTERM reach the traps at once, and cleanup stops the whole run.
setsid python3 - "$PTS/phoronix-test-suite" "$ENGINE" "$user" "$mnt" "$ROUNDS" "$TRIALS" "$TESTS" <<'PY' &
import json, math, os, random, re, statistics, subprocess, sys, time
pts, engine, user, mnt, rounds, trials, tests = sys.argv[1:]
rounds, trials, tests = int(rounds), int(trials), tests.split(",")

# Per test: PTS's local profile and its options (by 0-based menu index, or
# a raw value), the PTS result's scale; engine's profile, entries and result.
TESTS = {
    "fs-mark": dict(pts="local/fs-mark-1.0.3", preset="fs-mark.test=0", scale="Files/s",
                    engine=["fs-mark", "-o", "test=1000 Files, 1MB Size"], result="files_per_second"),
    # Both harnesses at one loop (PTS's wrapper given `-L 1`): the harnesses alone.
    "fs-mark-1": dict(pts="local/fs-mark-1.0.3", values="fs-mark.test=-L 1 -s 1048576 -n 1000", scale="Files/s",
                      engine=["fs-mark", "-o", "test=1000 Files, 1MB Size"], result="files_per_second"),
    "sqlite": dict(pts="local/sqlite-2.3.0", preset="sqlite.cpu-threads=0", scale="Seconds",
                   engine=["sqlite", "-o", "copies=1"], result="seconds"),
    "dbench": dict(pts="local/dbench-1.0.2", preset="dbench.client-count=0", scale="MB/s",
                   engine=["dbench", "-o", "clients=1"], result="throughput"),
    "postmark": dict(pts="local/postmark-1.1.2", preset="", scale="TPS",
                     engine=["postmark", "-o", "transactions=250000"], result="tps"),
    "fio": dict(pts="local/fio-2.2.0", scale="IOPS",
                values=f"fio.type=randread;fio.engine=io_uring;fio.direct=1;fio.size=4k;fio.cpu-threads=1;fio.auto-disk-mount-points={mnt}/pts",
                engine=["fio", "-o", "type=Random Read", "-o", "engine=IO_uring", "-o", "direct=Yes", "-o", "block_size=4KB"],
                result="iops"),
}

def run_pts(t, name):
    d = TESTS[t]
    env = dict(os.environ, PTS_USER_PATH_OVERRIDE=user + "/", PTS_TEST_INSTALL_ROOT_PATH=mnt + "/pts/",
               NO_EXTERNAL_DEPENDENCIES="1", PTS_IGNORE_MODULES="1", TEST_RESULTS_NAME=name,
               TEST_RESULTS_IDENTIFIER="pts", TEST_RESULTS_DESCRIPTION="bench-pts", FORCE_TIMES_TO_RUN=str(trials))
    if d.get("preset"):
        env["PRESET_OPTIONS"] = d["preset"]
    if d.get("values"):
        env["PRESET_OPTIONS_VALUES"] = d["values"]
    log = open(f"{user}/{name}.log", "w")
    subprocess.run([pts, "batch-benchmark", d["pts"]], env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    xml = open(f"{user}/test-results/{name}/composite.xml").read()
    for res in re.findall(r"<Result>(.*?)</Result>", xml, re.S):
        if f"<Scale>{d['scale']}</Scale>" in res:
            raw = re.search(r"<RawString>([^<]*)</RawString>", res).group(1)
            values = [float(x) for x in raw.split(":") if x]
            if not values:
                # PTS drops a sys.time value under its MinimalTestTime (2 s).
                sys.exit(f"PTS kept no value of {t} (a timed trial under 2 s is dropped by PTS): see {user}/{name}.log")
            return values
    sys.exit(f"PTS gave no {d['scale']} result for {t}: see {user}/{name}.log")

def run_engine(t, name):
    d = TESTS[t]
    log = open(f"{user}/{name}.log", "w")
    subprocess.run([engine, "benchmark", *d["engine"], "--runs", str(trials), "-y", "--save", name, "--identifier", "engine",
                    "--target-dir", mnt + "/engine"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=True)
    f = json.load(open(os.path.join(os.environ["ENGINE_HOME"], "results", name, "result.json")))
    return next(r for r in f["results"] if r["result"] == d["result"])["entries"][0]["trials"]

# Student's t (two-sided 95 %) for small samples; normal past 30.
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
       2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
def t95(df):
    return T95[df - 1] if df <= len(T95) else 1.96

data = {t: {"pts": [], "engine": [], "wall": {"pts": 0.0, "engine": 0.0}} for t in tests}
for r in range(rounds):
    for t in tests:
        order = ["pts", "engine"]
        random.shuffle(order)
        for who in order:
            name = f"{t}-{who}-{r + 1}"
            s = time.monotonic()
            v = run_pts(t, name) if who == "pts" else run_engine(t, name)
            data[t]["wall"][who] += time.monotonic() - s
            data[t][who].append(v)
            print(f"  round {r + 1}/{rounds} {t:9} {who:6} {statistics.mean(v):10.2f}  trials {' '.join(f'{x:g}' for x in v)}", flush=True)

print(f"== PTS and engine, {rounds} round(s) of {trials} trial(s), alternating on {mnt} (ext4, loop, direct I/O)")
print(f"  {'test':9} {'PTS':>10} {'engine':>10}  {'engine / PTS [95 % interval]':32} {'time for equal precision':>26}")
for t in tests:
    d = data[t]
    means = {w: [statistics.mean(v) for v in d[w]] for w in ("pts", "engine")}
    logs = [math.log(e / p) for e, p in zip(means["engine"], means["pts"])]
    g = math.exp(statistics.mean(logs))
    if len(logs) > 1:
        h = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    else:
        # One round: the trials, unpaired, on the log scale.
        a, b = [math.log(x) for x in d["engine"][0]], [math.log(x) for x in d["pts"][0]]
        h = t95(len(a) + len(b) - 2) * math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    lo, hi = math.exp(math.log(g) - h), math.exp(math.log(g) + h)
    cost = {}
    for w in ("pts", "engine"):
        flat = [x for v in d[w] for x in v]
        rse = statistics.stdev(flat) / statistics.mean(flat) / math.sqrt(len(flat))
        cost[w] = d["wall"][w] * rse ** 2
    pm, em = statistics.mean(means["pts"]), statistics.mean(means["engine"])
    within = "within ±3 %" if lo >= 0.97 and hi <= 1.03 else ("contains 1" if lo <= 1 <= hi else "excludes 1")
    print(f"  {t:9} {pm:10.2f} {em:10.2f}  {g:.3f} [{lo:.3f}, {hi:.3f}] {within:12} "
          f"engine {d['wall']['engine']:.0f} s, PTS {d['wall']['pts']:.0f} s: {cost['engine'] / cost['pts']:.2f}×")
PY
child=$!
rc=0
wait "$child" || rc=$?
child=""
exit "$rc"

#!/usr/bin/env bash
# Smoke check of the Python consumers against `ackbench broker` and `ackbench provider`.
#
# Usage (from anywhere, after `cargo build`): targets/python/smoke.sh
# Needs python3 with boto3. Takes about 50 s; every process it starts is bounded (`timeout`,
# `--for`) and killed on exit. Exits 0 when every check passes, 1 otherwise.
#
# 1. healthy provider, ack_after_work.py, a poison message then 5 orders: the poison message
#    kills the worker (KeyError: 'email'), as naive code does; restarted, it makes one call per
#    order.
# 2. provider calls of 2 s (40 s scaled by 0.05) against a 1 s lease: ack_after_work.py as two
#    worker processes sends some orders more than once (duplicates; reported, not checked).
# 3. the same, claim_then_send.py as two worker processes on one claim store: one call per order,
#    and the queue ends empty.
set -u
cd "$(dirname "$0")/../.."
ACKBENCH=${ACKBENCH:-target/debug/ackbench}
[ -x "$ACKBENCH" ] || { echo "no $ACKBENCH: run cargo build first" >&2; exit 1; }

TMP=$(mktemp -d /tmp/ackbench-pysmoke.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
FAILED=0
check() { # check NAME COMMAND...
  if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; FAILED=1; fi
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

SCALE=0.05
# 40 s provider calls (2 s at the time scale) against a 1 s lease, in wall time (the broker does
# not scale its lease). The consumers run on the machine's clock here (no live run starts them
# on a scaled one), so their own durations are wall seconds.
cat >"$TMP/slow.yaml" <<'EOF'
name: python-smoke-slow
description: Provider calls take 40 s (2 s at time scale 0.05) against a 1 s lease.
mode: sim
seed: 1
run: { duration: 1m }
broker: { kind: embedded, visibility_timeout: 1s, max_receives: 3, stale_ack: reject }
workload: { arrival: { every: 1s }, count: 3 }
consumer: { target: claim-then-send, workers: 2 }
provider:
  effect_at: request
  latency: { dist: fixed, value: 40s }
EOF

# start PROFILE NAME: a broker and a provider (for 14 s) on free ports; sets QUEUE_URL, BROKER,
# PROVIDER, PROVIDER_PID, LEDGER.
start() {
  local bport pport
  bport=$(free_port); pport=$(free_port)
  LEDGER="$TMP/$2.csv"
  "$ACKBENCH" broker "$1" --listen "127.0.0.1:$bport" >"$TMP/$2-broker.log" 2>&1 &
  BROKER=$!; PIDS+=("$BROKER")
  "$ACKBENCH" provider "$1" --listen "127.0.0.1:$pport" --time-scale "$SCALE" --for 14s \
    --ledger "$LEDGER" >"$TMP/$2-provider.log" 2>&1 &
  PROVIDER_PID=$!; PIDS+=("$PROVIDER_PID")
  export AWS_ENDPOINT_URL="http://127.0.0.1:$bport" AWS_SECRET_ACCESS_KEY=unused
  # The consumers read AWS_REGION; boto3 itself (for the helpers below) reads AWS_DEFAULT_REGION.
  export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
  QUEUE_URL="http://127.0.0.1:$bport/000000000000/ackbench"
  PROVIDER="http://127.0.0.1:$pport"
  for _ in $(seq 50); do
    grep -q "queue ackbench" "$TMP/$2-broker.log" && grep -q "listening" "$TMP/$2-provider.log" && return
    sleep 0.1
  done
  echo "broker or provider did not start (logs in $TMP)" >&2; exit 1
}

# publish ARGS...: publish.py on this run's queue.
publish() { AWS_ACCESS_KEY_ID=publisher python3 targets/python/publish.py "$QUEUE_URL" "$@" >/dev/null; }

# worker N SCRIPT [SECONDS]: runs worker N of SCRIPT for at most SECONDS (10); stderr appended
# to $TMP/<run>-wN.log.
worker() {
  AWS_ACCESS_KEY_ID="worker-$1" ACKBENCH_WORKER="$1" ACKBENCH_QUEUE_URL="$QUEUE_URL" \
    ACKBENCH_PROVIDER_URL="$PROVIDER/w/$1/" ACKBENCH_STATE_DIR="$TMP/$RUN-state" \
    timeout "${3:-10}" python3 "targets/python/$2" 2>>"$TMP/$RUN-w$1.log"
}

# finish: waits for the provider to write its ledger, stops the broker.
finish() {
  wait "$PROVIDER_PID"
  # What the broker still holds (visible + leased) in the queue and in its DLQ, before it stops.
  read -r LEFT DLQ < <(AWS_ACCESS_KEY_ID=publisher python3 - "$QUEUE_URL" <<'EOF'
import sys, boto3
sqs = boto3.client("sqs")
def held(url):
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return int(a["ApproximateNumberOfMessages"]) + int(a["ApproximateNumberOfMessagesNotVisible"])
print(held(sys.argv[1]), held(sys.argv[1] + "-dlq"))
EOF
)
  kill "$BROKER"; wait "$BROKER" 2>/dev/null
  echo "     provider: $(grep '^calls' "$TMP/$RUN-provider.log")"
}
calls() { tail -n +2 "$LEDGER" | grep -c . ; }
keys() { tail -n +2 "$LEDGER" | cut -d, -f1 | sort -u | grep -c . ; }

echo "== 1. ack_after_work.py, healthy provider, a poison message then 5 orders"
RUN=healthy; start profiles/healthy.yaml $RUN; publish 6 --poison-first 1
worker 1 ack_after_work.py; RC=$?
# Restarted, as the harness does: the poison message is leased (30 s), the orders are next.
worker 1 ack_after_work.py 6
finish
cat "$LEDGER"; echo
check "5 calls, one per order" [ "$(calls)" = 5 -a "$(keys)" = 5 ]
check "the poison message killed the worker (exit $RC)" [ "$RC" = 1 ]
check "with KeyError: 'email'" grep -q "KeyError: 'email'" "$TMP/$RUN-w1.log"
check "the poison message is still on the queue ($LEFT)" [ "$LEFT" = 1 ]

echo "== 2. ack_after_work.py x2, 2 s calls against a 1 s lease, 3 orders"
RUN=slow-ack; start "$TMP/slow.yaml" $RUN; publish 3
worker 1 ack_after_work.py & W1=$!; worker 2 ack_after_work.py & W2=$!; wait $W1 $W2
finish
cat "$LEDGER"; echo
echo "     $(calls) calls for 3 orders (duplicates expected), $LEFT left on the queue, $DLQ in the DLQ"
grep -h "stale" "$TMP/$RUN"-w*.log | sed 's/^/     /'

echo "== 3. claim_then_send.py x2, 2 s calls against a 1 s lease, 3 orders"
RUN=slow-claim; start "$TMP/slow.yaml" $RUN; publish 3
export ACKBENCH_CLAIM_WINDOW=3  # wall seconds (the consumer's clock is the machine's): the hand-back
worker 1 claim_then_send.py & W1=$!; worker 2 claim_then_send.py & W2=$!; wait $W1 $W2
finish
cat "$LEDGER"; echo
grep -h "delivery\|stale" "$TMP/$RUN"-w*.log | sed 's/^/     /'
check "3 calls, one per order" [ "$(calls)" = 3 -a "$(keys)" = 3 ]
check "every order acked: queue and DLQ empty ($LEFT, $DLQ)" [ "$LEFT" = 0 -a "$DLQ" = 0 ]
check "every claim stamped" [ "$(python3 -c "import sqlite3; print(sqlite3.connect('$TMP/$RUN-state/claims.sqlite3').execute('select count(*) from claims where sent_at is not null').fetchone()[0])")" = 3 ]

[ "$FAILED" = 0 ] && rm -rf "$TMP" || echo "logs in $TMP"
exit "$FAILED"

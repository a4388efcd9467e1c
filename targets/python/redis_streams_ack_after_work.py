#!/usr/bin/env python3
"""ack-after-work, as an external Redis Streams consumer (redis-py): call the provider, then XACK.

At-least-once (docs/domain.md, "Ack placement": after the work). Redis has no lease timer: an
entry stays in its reader's pending entries list until acked, and another consumer takes it over
(XCLAIM) once it has been idle for min_idle. A provider slower than min_idle therefore gets the
entry claimed by an idle consumer while the first one still works on it: duplicate effects. An
entry whose handler dies is never lost: it is claimed after min_idle.

The consumer-side rules, as in ackbench's model of Redis Streams:
- before reading new entries, claim the pending ones idle for min_idle (lowest id first); with a
  claim period, only at its ticks (multiples of it from the run's start);
- an entry that has had max_deliveries deliveries is not claimed again: it is taken without a
  delivery (XCLAIM JUSTID), copied to the dead stream with its `id` and acked;
- while idle, XREADGROUP blocks until shortly before the next pending entry becomes claimable,
  then polls, so an idle consumer claims at the instant an entry qualifies.

One worker process of an ackbench live run; its configuration comes from the environment (see
docs/live.md): ACKBENCH_REDIS_URL (this worker's own proxy port), ACKBENCH_STREAM,
ACKBENCH_DEAD_STREAM, ACKBENCH_GROUP, ACKBENCH_CONSUMER, ACKBENCH_MIN_IDLE_MS,
ACKBENCH_CLAIM_EVERY_MS, ACKBENCH_MAX_DELIVERIES, ACKBENCH_RUN_START_MS (Unix milliseconds on
this consumer's clock), ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER.

Every duration is in profile milliseconds: a live run starts its workers on a clock sped up to
the run's pace (`consumer.clock: scaled`, the default of a compressed run), and the worker's
proxy converts the durations on the wire (BLOCK, min-idle-time, XPENDING's idle times) between
profile and wall time. ACKBENCH_TIME_SCALE is not read.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

import redis

REDIS_URL = os.environ["ACKBENCH_REDIS_URL"]
STREAM = os.environ["ACKBENCH_STREAM"]
DEAD = os.environ.get("ACKBENCH_DEAD_STREAM", STREAM + ":dead")
GROUP = os.environ["ACKBENCH_GROUP"]
CONSUMER = os.environ["ACKBENCH_CONSUMER"]
MIN_IDLE_MS = int(os.environ["ACKBENCH_MIN_IDLE_MS"])
CLAIM_EVERY_MS = int(os.environ.get("ACKBENCH_CLAIM_EVERY_MS", "0"))
MAX_DELIVERIES = int(os.environ.get("ACKBENCH_MAX_DELIVERIES", "0"))
RUN_START_MS = int(os.environ.get("ACKBENCH_RUN_START_MS", "0"))
PROVIDER_URL = os.environ["ACKBENCH_PROVIDER_URL"]  # this worker's base URL, ends in "/"
WORKER = os.environ.get("ACKBENCH_WORKER", "?")

# A generous client timeout on the provider call (15 minutes): a slow provider is the fault
# under test, so the call waits for it, as naive code does.
CALL_TIMEOUT_S = 900
# The longest XREADGROUP block: 1 second, so an entry handed back early is seen soon.
MAX_BLOCK_MS = 1000
# Back-off after a failed command (Redis unreachable).
BACKOFF_S = 1

# Redis ends a blocking read's timeout only on its own timer tick (every 1000/hz of the
# server's milliseconds: 100 ms at the default hz 10), so a read can return up to a tick after
# its BLOCK (sooner when other clients' commands wake the server). A consumer blocked when a
# claim comes due claims late; so this one never blocks into the last BLOCK_SLACK_MS before a
# claim, and polls every POLL_MS there instead (it sleeps until the claim is due, so it claims
# at the instant the entry qualifies). The tick is measured at start in this consumer's own
# clock (measure_tick): no constant would do, since on a clock sped up to a compressed run's
# pace the server's tick is longer in this clock's milliseconds (2000 of them at time_scale
# 0.05). The slack is one and a half ticks; a poll is a twentieth of a tick (5 ms of the
# server's at hz 10).
BLOCK_SLACK_MS = None
POLL_MS = None


def log(text):
    print(f"worker {WORKER}: {text}", file=sys.stderr, flush=True)


def now_ms():
    return int(time.time() * 1000)


def measure_tick(r):
    """The server's timer tick in this clock's ms: 1000/hz of the server's ms (its configured hz,
    the lowest with dynamic-hz), times this clock's ms per server ms, from the server's TIME read
    on either side of a 500 ms sleep (the round trips inside it err on the long side)."""
    info = r.info("server")
    hz = int(info.get("configured_hz") or info.get("hz") or 10)
    start = time.monotonic()
    s0, us0 = r.time()
    time.sleep(0.5)
    s1, us1 = r.time()
    ours = time.monotonic() - start
    theirs = (s1 - s0) + (us1 - us0) / 1e6
    return 1000 / hz * (ours / theirs if theirs > 0 else 1)


def last_tick(now):
    """The latest claim tick at or before `now` (now itself without a claim period)."""
    if CLAIM_EVERY_MS == 0:
        return now
    return RUN_START_MS + (now - RUN_START_MS) // CLAIM_EVERY_MS * CLAIM_EVERY_MS


def next_tick(at):
    """The first claim tick at or after `at`."""
    if CLAIM_EVERY_MS == 0:
        return at
    return RUN_START_MS - (-(at - RUN_START_MS) // CLAIM_EVERY_MS) * CLAIM_EVERY_MS


def send(key, to):
    """The effect: POST {provider}send. True when the provider accepted it (2xx)."""
    req = urllib.request.Request(
        PROVIDER_URL + "send",
        data=json.dumps({"key": key, "to": to}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=CALL_TIMEOUT_S) as resp:
            json.load(resp)  # {"id": "..."}
            return True
    except urllib.error.HTTPError as e:
        log(f"{key}: provider answered {e.code}")
        return False
    except (urllib.error.URLError, OSError) as e:  # unreachable, reset, timed out
        log(f"{key}: provider call failed: {e}")
        return False


def dead_letter(r, idle, entry_id, deliveries):
    """The max_deliveries rule: take the entry (no delivery), copy it to the dead stream, ack."""
    if not r.xclaim(STREAM, GROUP, CONSUMER, idle, [entry_id], justid=True):
        return  # another consumer took it first
    found = r.xrange(STREAM, entry_id, entry_id, count=1)
    body = found[0][1].get("body", "") if found else ""
    r.xadd(DEAD, {"id": entry_id, "deliveries": deliveries, "body": body})
    r.xack(STREAM, GROUP, entry_id)
    log(f"{entry_id}: moved to {DEAD} after {deliveries} deliveries")


def claim(r):
    """Claims the first claimable pending entry: (id, fields, delivery number) or None."""
    now = now_ms()
    idle = MIN_IDLE_MS + (now - last_tick(now))
    for p in r.xpending_range(STREAM, GROUP, "-", "+", 16, idle=idle):
        entry_id, deliveries = p["message_id"], p["times_delivered"]
        if MAX_DELIVERIES and deliveries >= MAX_DELIVERIES:
            dead_letter(r, idle, entry_id, deliveries)
            continue
        # The min-idle-time guards against another consumer claiming it first.
        for claimed_id, fields in r.xclaim(STREAM, GROUP, CONSUMER, idle, [entry_id]):
            if fields is not None:
                return claimed_id, fields, deliveries + 1
    return None


def next_claim_ms(r):
    """How long until the next pending entry becomes claimable (None: nothing pending)."""
    now = now_ms()
    waits = [
        next_tick(now - p["time_since_delivered"] + MIN_IDLE_MS) - now
        for p in r.xpending_range(STREAM, GROUP, "-", "+", 1000)
    ]
    return max(0, min(waits)) if waits else None


def read_new(r, block):
    """XREADGROUP > for one new entry, blocking `block` ms (None: not at all): (id, fields, 1)."""
    got = r.xreadgroup(GROUP, CONSUMER, {STREAM: ">"}, count=1, block=block)
    # RESP2: [[stream, [(id, fields)]]]; RESP3: {stream: [[(id, fields)]]}.
    if isinstance(got, dict):
        entries = [e for batch in got.values() for e in batch[0]]
    else:
        entries = [e for _, batch in got or [] for e in batch]
    for entry_id, fields in entries:
        if fields:
            return entry_id, fields, 1
    return None


def receive(r):
    """Claims first; else reads a new entry, waiting at most until the next claim is due.

    A blocking read ends at once when an entry arrives, but its timeout only on the server's
    tick: it never blocks into the last BLOCK_SLACK_MS before a claim, which is polled instead.
    """
    while True:
        got = claim(r)
        if got:
            return got
        wait = next_claim_ms(r)
        if wait is not None and wait <= BLOCK_SLACK_MS:
            got = read_new(r, None)
            if got:
                return got
            time.sleep(max(1, min(wait, POLL_MS)) / 1000)
            continue
        block = MAX_BLOCK_MS if wait is None else min(MAX_BLOCK_MS, int(wait - BLOCK_SLACK_MS))
        got = read_new(r, block)
        if got:
            return got


def handle(r, entry_id, fields, delivery):
    """One delivery: read the body, do the work, then ack."""
    body = json.loads(fields["body"])
    key = body["key"]
    # A poison message (old schema, no `email`) raises here and kills the worker, as naive code
    # does: the harness restarts it, and the entry is claimed after min_idle.
    to = body["email"]

    if not send(key, to):
        # Not sent: no ack. The entry is claimed again after min_idle.
        return
    if r.xack(STREAM, GROUP, entry_id) == 0:
        # A late ack: the entry was claimed by another consumer, which acked it first.
        log(f"{key}: XACK of delivery {delivery} returned 0: already acked")


def main():
    global BLOCK_SLACK_MS, POLL_MS
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    while BLOCK_SLACK_MS is None:
        try:
            tick = measure_tick(r)
        except redis.exceptions.RedisError as e:
            log(f"cannot measure the server's tick: {e}")
            time.sleep(BACKOFF_S)
            continue
        BLOCK_SLACK_MS, POLL_MS = 1.5 * tick, tick / 20
    log(
        f"consuming {STREAM} as {CONSUMER} in {GROUP}, min idle {MIN_IDLE_MS} ms, "
        f"server tick {tick:.0f} ms, provider {PROVIDER_URL}"
    )
    while True:
        try:
            got = receive(r)
        except redis.exceptions.RedisError as e:
            # Redis cannot be reached: back off and try again, as a real consumer does.
            log(f"receive failed: {e}")
            time.sleep(BACKOFF_S)
            continue
        if got:
            handle(r, *got)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The demo's implementer: it runs in plan mode, so it asks the lead to approve its plan first.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

next_message
say "got '$MSG_BODY' from $MSG_FROM"
swarm send "$SWARM_LEAD" "hello from alice" >/dev/null

if [ "${SWARM_PLAN_MODE:-}" = required ]; then
    say "in plan mode: submitting a plan and waiting for the lead"
    printf '1. write a friendlier greeting\n2. tell bob it is ready\n' |
        swarm plan submit - --wait --timeout "${DEMO_PATIENCE:-120}"
fi
task=$(assigned_task)
say "working on task $task"
swarm task start "$task" >/dev/null
swarm task done "$task" --note "greeting written" >/dev/null
swarm send "$SWARM_LEAD" "result: wrote a friendlier greeting" >/dev/null
await_shutdown

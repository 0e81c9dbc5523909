#!/usr/bin/env bash
# The demo's reviewer: it waits for a task from the lead and reports back.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

next_message
say "got '$MSG_BODY' from $MSG_FROM"
swarm send "$SWARM_LEAD" "hello from bob" >/dev/null

task=$(assigned_task)
next_message
say "task $task from $MSG_FROM: $MSG_BODY"
# The review waits for the greeting on the board, then starts its own task there.
blockers=$(swarm task show "$task" | sed -n 's/^.*blocked by: //p' | tr ',' ' ')
if [ "$blockers" != "-" ]; then
    # shellcheck disable=SC2086 # one id per word
    swarm task wait $blockers --timeout "${DEMO_PATIENCE:-120}" >/dev/null
fi
swarm task start "$task" >/dev/null
swarm task done "$task" --note "looks good" >/dev/null
swarm send "$SWARM_LEAD" "result: the change looks good" >/dev/null
await_shutdown

#!/usr/bin/env bash
# The demo's reviewer: it waits for a task from the lead and reports back.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

next_message
say "got '$MSG_BODY' from $MSG_FROM"
swarm send "$SWARM_LEAD" "hello from bob" >/dev/null

next_message
say "task from $MSG_FROM: $MSG_BODY"
# The review waits for the greeting on the board, then takes its own task there.
swarm task wait 1 --timeout "${DEMO_PATIENCE:-120}" >/dev/null
swarm task claim >/dev/null
swarm task done 2 --note "looks good" >/dev/null
swarm send "$SWARM_LEAD" "result: the change looks good" >/dev/null
await_shutdown

#!/usr/bin/env bash
# The demo's reviewer: it waits for a task from the lead and reports back.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

next_message
say "got '$MSG_BODY' from $MSG_FROM"
swarm send "$SWARM_LEAD" "hello from bob" >/dev/null

next_message
say "task from $MSG_FROM: $MSG_BODY"
swarm send "$SWARM_LEAD" "result: the change looks good" >/dev/null
await_shutdown

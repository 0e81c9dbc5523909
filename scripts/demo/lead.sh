#!/usr/bin/env bash
# The demo's lead: a board of two tasks, a broadcast, a plan approval, a task for each teammate,
# results, and a graceful shutdown. The board lives on between runs of the team, so each run
# works on the tasks it adds, by the ids they get.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

say "putting two tasks on the board"
greeting=$(swarm task add "Write a friendlier greeting")
review=$(swarm task add "Review the greeting" --blocked-by "$greeting")

say "broadcasting the standup to the team"
swarm send '*' "standup: say hello" >/dev/null

hellos=0 results=0
while ((hellos < 2 || results < 2)); do
    next_message
    case "$MSG_BODY" in
        "hello from "*)
            hellos=$((hellos + 1))
            say "$MSG_FROM says hello"
            ;;
        plan_approval_request*)
            say "approving $MSG_FROM's plan"
            swarm plan approve "$(request_id "$MSG_BODY")" --permission-mode acceptEdits >/dev/null
            swarm task assign "$greeting" alice >/dev/null
            swarm task assign "$review" bob >/dev/null
            swarm send bob "please review alice's change to greeting.txt" >/dev/null
            ;;
        "result: "*)
            results=$((results + 1))
            say "$MSG_FROM reports: ${MSG_BODY#result: }"
            ;;
        *) say "noted: $MSG_BODY" ;;
    esac
done

for teammate in alice bob; do
    swarm shutdown request "$teammate" --reason "the work is done" --wait --timeout 60
done
for teammate in alice bob; do
    swarm wait "$teammate" --timeout 60
done
say "all done"

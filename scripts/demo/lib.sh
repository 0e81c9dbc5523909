# Shared by the demo agents: they talk only through the swarm CLI.
# shellcheck shell=bash

say() { printf '[%s] %s\n' "$SWARM_AGENT" "$*"; }

# Waits for the next message and splits `swarm recv`'s line "<msg_id>  <from>  <body>"
# into MSG_ID, MSG_FROM and MSG_BODY.
next_message() {
    local line rest
    line=$(swarm recv --wait --max 1 --timeout "${DEMO_PATIENCE:-120}")
    MSG_ID=${line%%  *}
    rest=${line#*  }
    MSG_FROM=${rest%%  *}
    MSG_BODY=${rest#*  }
}

# Waits for the lead's task_assignment ("task_assignment 3: Write a friendlier greeting") and
# prints the task's id; messages before it are said and passed over.
assigned_task() {
    while next_message; do
        case "$MSG_BODY" in
            task_assignment*)
                local words
                read -r -a words <<<"$MSG_BODY"
                printf '%s\n' "${words[1]%:}"
                return
                ;;
            *) say "before my task: $MSG_BODY" >&2 ;;
        esac
    done
    return 1
}

# The request id in a protocol message's body: "shutdown_request shutdown-1@bob: reason".
request_id() {
    local words
    read -r -a words <<<"$1"
    printf '%s\n' "${words[1]%:}"
}

# A teammate's last duty: approve the lead's shutdown request, then exit.
await_shutdown() {
    while next_message; do
        case "$MSG_BODY" in
            shutdown_request*)
                swarm shutdown approve "$(request_id "$MSG_BODY")" >/dev/null
                say "shutting down as asked"
                exit 0
                ;;
            *) say "ignoring: $MSG_BODY" ;;
        esac
    done
}

#!/usr/bin/env bash
# The shell of the ceiling action's steps (action.yml), here so that the
# end-to-end test runs the same code the action runs
# (cmd/ceiling/action_e2e_test.go).
#
#   run.sh setup  build ceiling from the action's own files
#                 ($GITHUB_ACTION_PATH: the instrument is the action's ref,
#                 never the pull request's) and resolve the mode (output
#                 "mode")
#   run.sh run    `ceiling action`, its flags from the INPUT_* variables;
#                 the token only in the modes that use it
set -euo pipefail
: "${RUNNER_TEMP:?}" "${GITHUB_OUTPUT:?}" "${GITHUB_ACTION_PATH:?}"
bin="$RUNNER_TEMP/ceiling-action/bin/ceiling"
case "${1:-}" in
setup)
	mkdir -p "$(dirname "$bin")"
	version=${GITHUB_ACTION_REF:-}
	(cd "$GITHUB_ACTION_PATH" && go build -trimpath ${version:+-ldflags "-X main.version=$version"} -o "$bin" ./cmd/ceiling)
	"$bin" action --mode "${INPUT_MODE:-auto}" --resolve-mode >> "$GITHUB_OUTPUT"
	;;
run)
	flags=(
		--mode "${INPUT_MODE:-auto}" --path "${INPUT_PATH:-.}" --target "${INPUT_TARGET:-}"
		--build "${INPUT_BUILD:-}" --base-build "${INPUT_BASE_BUILD:-}" --base-target "${INPUT_BASE_TARGET:-}"
		--scenario "${INPUT_SCENARIO:-}" --quick="${INPUT_QUICK:-false}" --calibrate="${INPUT_CALIBRATE:-false}"
		--generator "${INPUT_GENERATOR:-}" --name "${INPUT_NAME:-ceiling-load}" --fail-on "${INPUT_FAIL_ON:-slower,inconclusive}"
		--data-branch "${INPUT_DATA_BRANCH:-}" --publish="${INPUT_PUBLISH:-true}" --cpus "${INPUT_CPUS:-auto}"
		--site-url "${INPUT_SITE_URL:-}" --server-user "${INPUT_SERVER_USER-nobody}"
		--change-comment "${INPUT_CHANGE_COMMENT:-none}"
	)
	# The token is an environment variable of ceiling's, never an argument;
	# compare mode, which runs the pull request's code, never gets it.
	token=${CEILING_ACTION_TOKEN:-}
	unset CEILING_ACTION_TOKEN
	if [ "${INPUT_MODE:-}" = compare ]; then token=""; fi
	GITHUB_TOKEN=$token exec "$bin" action "${flags[@]}"
	;;
*)
	echo "usage: run.sh setup|run" >&2
	exit 2
	;;
esac

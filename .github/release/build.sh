#!/usr/bin/env bash
# The release's build step: ceiling and refserver for each platform, one
# .tar.gz per platform (both binaries, README, CHANGELOG), and SHA256SUMS
# over the archives. release.yml runs it on a v* tag; `make
# release-dry-run` runs it here (VERSION=v0.0.0-dry into dist/), so the
# archives a tag would publish can be built and checked without one.
#
#   build.sh VERSION [OUTDIR]        PLATFORMS="linux/amd64 ..." to narrow
set -euo pipefail

version=${1:?usage: build.sh VERSION [OUTDIR]}
out=${2:-dist}
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/arm64}
case "$version" in
v[0-9]*) ;;
*) echo "build.sh: VERSION $version is not a tag such as v0.1.0" >&2; exit 2 ;;
esac

rm -rf "$out"
mkdir -p "$out"
for p in $platforms; do
	os=${p%/*}
	arch=${p#*/}
	name="ceiling_${version#v}_${os}_${arch}"
	mkdir -p "$out/$name"
	for cmd in ceiling refserver; do
		# Static, stripped of the builder's paths; the version the tag names
		# (ceiling version prints it, results record it in meta.version).
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
			-ldflags "-s -w -X main.version=$version" -o "$out/$name/$cmd" "./cmd/$cmd"
	done
	cp README.md CHANGELOG.md "$out/$name/"
	tar -C "$out" -czf "$out/$name.tar.gz" "$name"
	rm -rf "${out:?}/$name"
done
(cd "$out" && sha256sum -- *.tar.gz > SHA256SUMS)
echo "build.sh: $(cd "$out" && ls -- *.tar.gz | wc -l) archives and SHA256SUMS in $out"

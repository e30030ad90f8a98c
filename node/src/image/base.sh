#!/usr/bin/env bash
# Builds the file tree of Tidemark's base image into $1, from the JDK $2 that runs the build: a
# jlinked Java runtime at /opt/java, the shared libraries it loads (copied from this machine, so
# the image needs no distribution underneath it), a non-root user 10001 and a /tmp. Jib puts the
# application on top of it (the `image` profile of node/pom.xml). Building the base here, rather
# than pulling one, is what lets a machine without a registry or a Docker daemon build the image.
# $3, when given, is the launcher jar (node/pom.xml) copied to /app/tidemark.jar.
set -euo pipefail
out=$1
java_home=${2:-${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}}
launcher=${3:-}
# The modules jdeps --print-module-deps reports for tidemark.jar, plus what it cannot see: TLS with
# EC keys and the DNS naming provider (Kubernetes discovery), jdk.management and
# jdk.net (keep-alive socket options) for Hazelcast.
modules=java.base,java.compiler,java.desktop,java.management,java.naming,java.net.http,java.scripting,java.security.jgss,java.security.sasl,java.sql,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.naming.dns,jdk.net,jdk.unsupported,jdk.zipfs

rm -rf "$out"
mkdir -p "$out/opt" "$out/etc" "$out/tmp" "$out/proc" "$out/app"
# the manifest-only jar whose Class-Path names Jib's layers, so /app/tidemark.jar runs as a jar does
[ -z "$launcher" ] || cp "$launcher" "$out/app/tidemark.jar"
"$java_home/bin/jlink" --module-path "$java_home/jmods" --add-modules "$modules" \
  --strip-debug --no-man-pages --no-header-files --compress=2 --output "$out/opt/java"
# Debian's JDK links cacerts to /etc/ssl; the image has no /etc/ssl, so keep the file itself
if [ -L "$out/opt/java/lib/security/cacerts" ]; then
  cp --remove-destination "$(readlink -f "$out/opt/java/lib/security/cacerts")" "$out/opt/java/lib/security/cacerts"
fi

# Every shared library the runtime's programs and libraries need, at the path the loader looks in.
# The X11, sound and splash-screen libraries are left out: a headless server never loads them.
find "$out/opt/java" -type f \( -name '*.so' -o -perm -u+x \) \
    ! -name 'libawt_xawt.so' ! -name 'libjawt.so' ! -name 'libsplashscreen.so' ! -name 'libjsound.so' -print0 |
  xargs -0 ldd 2>/dev/null | awk '/=> \// {print $3} /^\s*\/lib.*ld-linux/ {print $1}' | sort -u |
  while read -r lib; do
    mkdir -p "$out$(dirname "$lib")"
    cp -L "$lib" "$out$lib"
  done
# the program interpreter named in the ELF header
interp=/lib64/ld-linux-x86-64.so.2
mkdir -p "$out/lib64"
cp -L "$interp" "$out$interp"

printf 'root:x:0:0:root:/root:/sbin/nologin\ntidemark:x:10001:10001:Tidemark:/tmp:/sbin/nologin\n' >"$out/etc/passwd"
printf 'root:x:0:\ntidemark:x:10001:\n' >"$out/etc/group"
printf 'hosts: files dns\n' >"$out/etc/nsswitch.conf"

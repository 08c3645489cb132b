#!/usr/bin/env bash
# krt's image (Containerfile, docs/image.md), end to end with Debian's buildah (daemonless, vfs
# storage, chroot isolation):
#   1. builds the static krt binary (x86_64-unknown-linux-musl, release) in the workspace's target/;
#   2. builds the image from a small staging context (target/image-context/), and checks its config;
#   3. pushes it to a registry on loopback (Debian's docker-registry) and learns its digest;
#   4. checks that `krt controller install --image 127.0.0.1:PORT/krt@sha256:DIGEST` prints exactly
#      that reference in its Deployment, and installs those manifests into a krt-sim cluster;
#   5. pulls the image back by that digest and runs `/krt controller run` in it (as its user 65532,
#      with the krt-controller ServiceAccount's token) against the cluster: a Stack with one
#      ConfigMap must become Ready within 60 s.
# Prints `image: ... passed` or `image: FAILED ...` (exit 1). Everything it writes is under target/
# (image-context/, buildah/, image-test/); every process it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS
step() { echo "image: [$((SECONDS - started))s] $*"; }
fail() {
    echo "image: FAILED: $*" >&2
    exit 1
}
trap 'echo "image: FAILED at tests/image.sh:$LINENO: $BASH_COMMAND" >&2' ERR

# --- tools ---------------------------------------------------------------------------------------
# buildah (Debian's, daemonless), musl-gcc (ring and aws-lc-sys compile C for the musl target) and
# docker-registry.
missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v musl-gcc >/dev/null || missing+=(musl-tools)
command -v docker-registry >/dev/null || missing+=(docker-registry)
command -v jq >/dev/null || missing+=(jq)
command -v file >/dev/null || missing+=(file)
command -v readelf >/dev/null || missing+=(binutils)
if ((${#missing[@]})); then
    step "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v kubectl >/dev/null || fail "kubectl is not installed"
# The static binary's target, beside rust-toolchain.toml's (which pins only what every build needs).
rustup target list --installed | grep -qx x86_64-unknown-linux-musl ||
    rustup target add x86_64-unknown-linux-musl

target=${CARGO_TARGET_DIR:-target}
[[ $target == /* ]] || target=$root/$target
context=$target/image-context
work=$target/image-test
B() { # buildah on its own storage under target/
    timeout 300 buildah --storage-driver vfs --root "$target/buildah/storage" \
        --runroot "$target/buildah/run" "$@"
}

pids=()
controller_pgid=
cleanup() {
    local code=$?
    trap - ERR
    set +e
    [[ -n $controller_pgid ]] && kill -TERM -- "-$controller_pgid" 2>/dev/null
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [[ -n $controller_pgid ]] && sleep 1 && kill -KILL -- "-$controller_pgid" 2>/dev/null
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    B rm --all >/dev/null 2>&1
    # The image stays as krt:VERSION only; the registry's copy goes.
    [[ -n ${reference:-} ]] && B rmi "$reference" >/dev/null 2>&1
    rm -rf "$work/registry"
    if ((code == 0)); then
        echo "image: krt:$version built, pushed as $reference, ran the controller: passed ($((SECONDS - started))s)"
    else
        if [[ -s $work/controller.log ]]; then
            echo "image: the controller's log (last 20 lines):" >&2
            tail -n 20 "$work/controller.log" >&2
        fi
        echo "image: FAILED after $((SECONDS - started))s (logs in ${work#"$root"/}/)" >&2
    fi
}
trap cleanup EXIT

# A loopback port nothing listens on.
free_port() {
    local port
    for _ in $(seq 100); do
        port=$((20000 + RANDOM % 30000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    fail "no free loopback port"
}
# until_ok SECONDS COMMAND...: runs COMMAND every half second until it succeeds; fails after SECONDS.
until_ok() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}

# --- 1. the static binary ------------------------------------------------------------------------
step "cargo build --release --locked --target x86_64-unknown-linux-musl -p krt-cli"
build_started=$SECONDS
cargo build --release --locked --target x86_64-unknown-linux-musl -p krt-cli
step "krt built in $((SECONDS - build_started))s"
krt=$target/x86_64-unknown-linux-musl/release/krt
# Static: no program interpreter, no shared libraries.
elf=$(readelf -lW -dW "$krt")
if grep -qE 'INTERP|\(NEEDED\)' <<<"$elf"; then
    fail "$krt is not statically linked: $(file -b "$krt")"
fi
version=$("$krt" --version | awk '{print $2}')
[[ -n $version ]] || fail "krt --version printed no version"
step "krt $version: $(file -b "$krt" | cut -d, -f1-5), $(du -m "$krt" | cut -f1) MB"

# --- 2. the image --------------------------------------------------------------------------------
# The context: the binary, /etc/passwd and /etc/group of user krt (65532), the CA certificates,
# /tmp (1777), /home and the user's home /home/krt (owned by krt: the Containerfile's second COPY).
rm -rf "$context"
mkdir -p "$context/rootfs/etc/ssl/certs" "$context/rootfs/tmp" "$context/rootfs/home" "$context/home/krt"
cp "$krt" "$context/krt"
cp /etc/ssl/certs/ca-certificates.crt "$context/rootfs/etc/ssl/certs/ca-certificates.crt"
echo 'krt:x:65532:65532:krt:/home/krt:/sbin/nologin' >"$context/rootfs/etc/passwd"
echo 'krt:x:65532:' >"$context/rootfs/etc/group"
chmod 0755 "$context/rootfs" "$context/rootfs/etc" "$context/rootfs/home" "$context/home" "$context/home/krt"
chmod 0644 "$context/rootfs/etc/passwd" "$context/rootfs/etc/group"
chmod 1777 "$context/rootfs/tmp"
step "context ${context#"$root"/}: $(du -sm "$context" | cut -f1) MB"

# The storage is this script's own: what an earlier run left (a killed run's containers, the image
# it built) goes.
B rm --all >/dev/null
B rmi --all --force >/dev/null
step "buildah bud -t krt:$version"
B bud --isolation chroot --quiet -t "krt:$version" -f Containerfile "$context" >/dev/null
config=$(B inspect --type image "krt:$version" | jq -c .OCIv1.config)
[[ $(jq -c .Entrypoint <<<"$config") == '["/krt"]' ]] || fail "entrypoint: $config"
[[ $(jq -r .User <<<"$config") == 65532:65532 ]] || fail "user: $config"
step "image krt:$version: entrypoint [\"/krt\"], user 65532:65532, $(B images --format '{{.Size}}' "krt:$version")"

# --- 3. a registry on loopback, and the push -----------------------------------------------------
rm -rf "$work"
mkdir -p "$work/registry" "$work/kube"
port=$(free_port)
cat >"$work/registry/config.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $work/registry/storage
http:
  addr: 127.0.0.1:$port
EOF
docker-registry serve "$work/registry/config.yml" >/dev/null 2>"$work/registry.log" &
pids+=($!)
until_ok 20 curl -fsS "http://127.0.0.1:$port/v2/" ||
    fail "docker-registry did not answer on 127.0.0.1:$port within 20 s"
registry=127.0.0.1:$port
B push --tls-verify=false --quiet --digestfile "$work/digest" "krt:$version" \
    "docker://$registry/krt:$version"
digest=$(cat "$work/digest")
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "the push wrote no digest: '$digest'"
reference=$registry/krt@$digest
# The registry serves that manifest under that digest.
served=$(curl -fsS -o /dev/null -D - \
    -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$registry/v2/krt/manifests/$digest" | tr -d '\r' |
    awk -F': ' 'tolower($1) == "docker-content-digest" {print $2}')
[[ $served == "$digest" ]] || fail "the registry serves $reference as '$served'"
step "pushed: $reference"

# --- 4. the install manifests name it ------------------------------------------------------------
"$krt" controller install --image "$reference" >"$work/install.yaml"
# Every `image:` value printed (the YAML printer folds a long one: `image: >-` and the value on the
# next line).
images=$(awk '/^ +image: / {
        value = $0; sub(/^ +image: /, "", value)
        if (value == ">-" || value == "|-") { getline value; gsub(/^ +| +$/, "", value) }
        print value
    }' "$work/install.yaml")
[[ $images == "$reference" ]] || fail "krt controller install --image $reference printed images: '$images'"
step "krt controller install --image $reference: the Deployment's one image is that reference"

# A cluster: krt-sim on loopback (which the chroot-isolated container shares).
step "starting krt-sim"
cargo build --locked --quiet -p krt-sim --bin krt-sim
"$target/debug/krt-sim" --listen 127.0.0.1:0 --kubeconfig "$work/admin.kubeconfig" \
    >"$work/krt-sim.log" 2>&1 &
pids+=($!)
k() { timeout 30 kubectl --kubeconfig "$work/admin.kubeconfig" --request-timeout=20s "$@"; }
until_ok 30 k get namespace default || fail "krt-sim did not serve within 30 s"
k apply --server-side -f "$work/install.yaml" >"$work/install-applied.txt"
applied=$(k -n krt-system get deployment krt-controller \
    -o jsonpath='{.spec.template.spec.containers[*].image}')
[[ $applied == "$reference" ]] || fail "the installed Deployment runs '$applied'"
step "installed into krt-sim: CRD, RBAC and a Deployment of $applied"

# The controller's credentials, as its Pod has them: a token of ServiceAccount krt-controller.
token=$(k -n krt-system create token krt-controller --duration 1h)
cp "$work/admin.kubeconfig" "$work/kube/config"
kubectl --kubeconfig "$work/kube/config" config set-credentials krt-sim-admin --token "$token" >/dev/null
chmod 0755 "$work/kube" && chmod 0644 "$work/kube/config"

# A tenant namespace whose `default` account (what Stacks naming none run as) may edit it.
k create namespace image-test >/dev/null
k -n image-test create rolebinding default-edit --clusterrole edit \
    --serviceaccount image-test:default >/dev/null

# --- 5. the controller, from the image pulled back by digest -------------------------------------
container=$(B from --tls-verify=false --quiet "docker://$reference")
# Its files: nothing but the binary, /etc, /home/krt (krt's) and /tmp (1777).
mnt=$(B mount "$container")
files=$(cd "$mnt" && find . -mindepth 1 | sort | tr '\n' ' ')
[[ $files == "./etc ./etc/group ./etc/passwd ./etc/ssl ./etc/ssl/certs ./etc/ssl/certs/ca-certificates.crt ./home ./home/krt ./krt ./tmp " ]] ||
    fail "the image holds: $files"
owners="$(stat -c '%u:%g %a' "$mnt/home" "$mnt/home/krt" "$mnt/tmp" "$mnt/krt" | tr '\n' ' ')"
[[ $owners == "0:0 755 65532:65532 755 0:0 1777 0:0 755 " ]] || fail "/home, /home/krt, /tmp, /krt: $owners"
B umount "$container" >/dev/null
step "pulled back by digest: /krt, /etc (passwd, group, CA certificates), /home/krt (65532), /tmp (1777)"
metrics=$(free_port)
step "buildah run $container: /krt controller run (metrics on 127.0.0.1:$metrics)"
# The Deployment's arguments, with this run's identity, a shorter lease and loopback metrics.
setsid timeout 300 buildah --storage-driver vfs --root "$target/buildah/storage" \
    --runroot "$target/buildah/run" run --isolation chroot \
    --env XDG_CACHE_HOME=/tmp/cache -v "$work/kube:/kube:ro" "$container" -- \
    /krt --kubeconfig /kube/config controller run --identity image-test \
    --lease-namespace krt-system --shards 4 --lease-duration 3s \
    --metrics-address "127.0.0.1:$metrics" --default-service-account default \
    </dev/null >"$work/controller.log" 2>&1 &
controller_pgid=$!
until_ok 30 curl -fsS "http://127.0.0.1:$metrics/healthz" ||
    fail "the controller's /healthz did not answer within 30 s"
# It runs as the image's user.
uid=$(ps -o uid=,args= --sid "$controller_pgid" | awk '$2 == "/krt" {print $1}')
[[ $uid == 65532 ]] || fail "the controller runs as uid '$uid', not 65532: $(ps -o uid=,args= --sid "$controller_pgid")"

k apply -f - >/dev/null <<EOF
apiVersion: krt.dev/v1alpha1
kind: Stack
metadata: {name: hello, namespace: image-test}
spec:
  interval: 1m
  resources:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: hello}, data: {greeting: from-the-image}}
EOF
# Ready: the ConfigMap is there, and the Stack is Ready at its generation.
ready() {
    local data status observed generation
    data=$(k -n image-test get configmap hello -o jsonpath='{.data.greeting}') || return 1
    [[ $data == from-the-image ]] || return 1
    IFS=/ read -r status observed generation < <(k -n image-test get stack hello \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.status.observedGeneration}/{.metadata.generation}')
    [[ $status == True && -n $generation && $observed == "$generation" ]]
}
until_ok 60 ready || fail "Stack image-test/hello not Ready within 60 s: $(k -n image-test get stack hello \
    -o jsonpath='{.status.conditions}' 2>&1)"
step "Stack image-test/hello Ready, ConfigMap hello written by the image's controller ($(k -n image-test get configmap hello -o jsonpath='{.metadata.labels.krt\.dev/stack}'))"
# It holds the four shard Leases, and is still running.
for shard in 0 1 2 3; do
    holder=$(k -n krt-system get lease "krt-controller-shard-$shard" -o jsonpath='{.spec.holderIdentity}')
    [[ $holder == image-test ]] || fail "Lease krt-controller-shard-$shard is held by '$holder'"
done
kill -0 "$controller_pgid" 2>/dev/null || fail "the controller exited"

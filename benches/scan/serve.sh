# Sourced by http.sh and large.sh, with `python`, `folder` and `here` set:
# serves FOLDER with nginx on 127.0.0.1:8795 behind the 20 ms proxy of
# benches/tools/small_chunks.py on 127.0.0.1:8766 (both stopped on exit),
# builds the command line (unless `serve_python_only` is set) and sets `work` (a scratch folder) and `bin`.
work="$(mktemp -d)"
mkdir -p "$work/tmp"
cat > "$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
error_log $work/error.log;
pid $work/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
    server { listen 127.0.0.1:8795; root $folder; }
}
CONF
nginx -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
"$python" "$here/../tools/small_chunks.py" proxy --port 8766 --upstream http://127.0.0.1:8795 --delay-ms 20 &
proxy_pid=$!
trap 'kill $proxy_pid $nginx_pid 2>/dev/null; rm -rf "$work"' EXIT
sleep 2
# `serve_python_only=1`: a benchmark of the Python package alone, with no binary to build.
[ -n "${serve_python_only:-}" ] || cargo build --quiet --release --bin zarrs-kerchunk
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"

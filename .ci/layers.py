#!/usr/bin/env python3
"""Which crate depends on which, which module of each crate imports which,
and whether both respect the layers.

Crates: reads each crate's `[dependencies]` (normal ones: dev-dependencies
may reach anywhere) for the workspace's own crates. Modules: reads every
`crate::<module>` path in a crate's src/ (use lines and inline paths) and
maps each file to its top-level module (`src/fetch/batch.rs` -> `fetch`).

    python3 .ci/layers.py            # print the dependency pictures
    python3 .ci/layers.py --check    # also fail if a lower layer imports a higher one

The layers, lowest first; a crate or module may use its own layer and any lower one.
"""
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES_DIR = ROOT / "crates"
# Crates outside crates/: the Python package's extension module.
OTHER_CRATES = {"zarrs_kerchunk_python": ROOT / "python"}

# The workspace's crates, lowest first: the format, then what reads it, then the tools.
CRATE_LAYERS = [
    ("kerchunk", "kerchunk_v3", "zarrs_zlib_sized", "hdf5_plugin_filters", "grib_grids", "zarrs_kerchunk_codecs", "zarrs_cf", "object_store_disk_cache"),
    ("zarrs_kerchunk", "kerchunk_scan", "kerchunk_combine"),
    ("kerchunk_icechunk",),
    ("zarrs_kerchunk_tools", "zarrs_kerchunk_examples"),
    ("zarrs_kerchunk_python",),
]

# Each crate's modules, lowest first. Modules in one tuple are one layer.
MODULE_LAYERS = {
    "kerchunk": [("error",), ("zarr",), ("model",), ("parse",), ("write",), ("lib",)],
    "zarrs_kerchunk": [
        ("error",),
        ("resolve",),
        ("fetch",),
        ("sources",),
        ("store",),
        ("write",),
        ("open",),
        ("lib",),
    ],
    "zarrs_zlib_sized": [("lib",)],
    "object_store_disk_cache": [("error", "entry"), ("layout",), ("evict",), ("cache", "store"), ("lib",)],
    "hdf5_plugin_filters": [("lib",)],
    "kerchunk_v3": [("error",), ("grid", "metadata"), ("v2",), ("lib",)],
    "grib_grids": [("error",), ("section",), ("gaussian",), ("regular", "reduced", "conformal", "equal_area", "rotated", "space_view", "healpix"), ("lib",)],
    "zarrs_kerchunk_codecs": [
        ("error", "layout", "bounded"),
        ("decode_only", "jpeg_c"),
        ("lzw", "packbits", "zstd", "lzma", "deflate", "predictor", "grib", "numeric", "image", "lerc", "jpegxl", "hdf_strings", "hdf5_plugins", "crop", "fletcher32"),
        ("registry",),
        ("lib", "tests"),
    ],
    "zarrs_cf": [("error", "calendar"), ("time", "packing"), ("variable", "select"), ("lib",)],
    "kerchunk_scan": [
        ("error", "options"),
        ("zarr", "read"),
        ("netcdf3", "hdf5", "subchunk", "grib", "tiff"),
        ("dmrpp",),
        ("lib",),
    ],
    "kerchunk_combine": [
        ("error",),
        ("options", "source", "held", "placement", "encoding", "coordinate", "times", "merge", "stack", "outer", "layout", "streamed", "uneven"),
        ("lib",),
    ],
    "kerchunk_icechunk": [
        ("error",),
        ("chunks", "containers", "splits", "commits", "s3", "gcs", "azure"),
        ("nodes",),
        ("location",),
        ("export", "import"),
        ("lib",),
    ],
    "zarrs_kerchunk_tools": [("inspect", "output", "icechunk", "credentials"), ("make",), ("encodings",), ("lib",)],
    "zarrs_kerchunk_examples": [("lib",)],
    "zarrs_kerchunk_python": [("errors", "runtime"), ("options", "packed", "documents", "refs_dict"), ("store",), ("array", "tools", "scan", "combine", "codecs"), ("shares", "manifests"), ("lib",)],
}

PATH = re.compile(r"\bcrate::(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def module_of(src: pathlib.Path, file: pathlib.Path) -> str:
    rel = file.relative_to(src)
    if len(rel.parts) == 1:
        return rel.stem
    return rel.parts[0]


def reexports(src: pathlib.Path) -> dict:
    """Names the crate root re-exports, and the module each comes from."""
    homes = {}
    lib = (src / "lib.rs").read_text()
    for module, names in re.findall(r"pub use ([a-z_][a-z0-9_]*)(?:::[a-z0-9_]+)*::\{?([A-Za-z0-9_, ]+)\}?;", lib):
        for name in names.split(","):
            homes[name.strip()] = module
    return homes


def module_imports(src: pathlib.Path) -> dict:
    homes = reexports(src)
    edges: dict = {}
    for file in sorted(src.rglob("*.rs")):
        # src/bin holds binaries: crates of their own, whose `crate::` is not the library's.
        if file.relative_to(src).parts[0] == "bin":
            continue
        here = module_of(src, file)
        text = file.read_text()
        # Unit tests may reach anywhere; only the code above `mod tests` counts.
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
        # Doc links and comments name other modules without importing them.
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
        for group, single in PATH.findall(text):
            names = [single] if single else [p.strip().split("::")[0] for p in group.split(",")]
            for name in names:
                name = homes.get(name.strip(), name.strip())
                if name and name != here and name not in ("self",):
                    edges.setdefault(here, set()).add(name)
    return edges


def crate_dir(crate: str) -> pathlib.Path:
    return OTHER_CRATES.get(crate, CRATES_DIR / crate)


def crate_dependencies() -> dict:
    ours = {d.name for d in CRATES_DIR.iterdir() if (d / "Cargo.toml").exists()} | set(OTHER_CRATES)
    edges = {}
    for crate in sorted(ours):
        manifest = tomllib.loads((crate_dir(crate) / "Cargo.toml").read_text())
        deps = set(manifest.get("dependencies", {})) & ours
        edges[crate] = deps
    return edges


def check(edges: dict, layers: list, label: str, bad: list) -> None:
    rank = {m: i for i, layer in enumerate(layers) for m in layer}
    for here in sorted(edges, key=lambda m: (rank.get(m, 99), m)):
        targets = sorted(edges[here], key=lambda m: (rank.get(m, 99), m))
        print(f"  {here:>22} -> {', '.join(targets) or '(nothing of ours)'}")
        for target in targets:
            if rank.get(here, 99) < rank.get(target, 99):
                bad.append(f"{label}: {here} uses {target}, a higher layer")
    for m in sorted(set(edges) - set(rank)):
        bad.append(f"{label}: {m} is in no layer")


def main() -> int:
    bad: list = []
    print("crates:")
    crates = crate_dependencies()
    check(crates, CRATE_LAYERS, "crates", bad)
    for crate in sorted(crates):
        print(f"modules of {crate}:")
        src = crate_dir(crate) / "src"
        edges = module_imports(src)
        # Every module is listed, importing something or not.
        for file in src.rglob("*.rs"):
            if file.relative_to(src).parts[0] != "bin":
                edges.setdefault(module_of(src, file), set())
        check(edges, MODULE_LAYERS.get(crate, []), crate, bad)
    if "--check" in sys.argv:
        for line in bad:
            print("layers:", line, file=sys.stderr)
        if bad:
            return 1
        print("layers: every crate and every import points down or sideways")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Which module of src/ imports which, and whether the imports respect the layers.

Reads every `crate::<module>` path in src/ (use lines and inline paths) and maps
each file to its top-level module (`src/fetch/batch.rs` -> `fetch`).

    python3 .ci/layers.py            # print the dependency picture
    python3 .ci/layers.py --check    # also fail if a lower layer imports a higher one

The layers, lowest first; a module may import its own layer and any lower one.
"""
import pathlib
import re
import sys

# Lowest first. Modules in one tuple are one layer.
LAYERS = [
    ("error",),
    ("zarr",),
    ("model",),
    ("parse",),
    ("resolve",),
    ("fetch",),
    ("sources",),
    ("store", "write", "codec"),
    ("inspect",),
    ("open",),
    ("lib",),
]

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
PATH = re.compile(r"\bcrate::(?:\{([^}]*)\}|([A-Za-z_]+))")


def module_of(file: pathlib.Path) -> str:
    rel = file.relative_to(SRC)
    if len(rel.parts) == 1:
        return rel.stem
    return rel.parts[0]


def reexports() -> dict:
    """Names the crate root re-exports, and the module each comes from."""
    homes = {}
    lib = (SRC / "lib.rs").read_text()
    for module, names in re.findall(r"pub use ([a-z_]+)(?:::[a-z_]+)*::\{?([A-Za-z_, ]+)\}?;", lib):
        for name in names.split(","):
            homes[name.strip()] = module
    return homes


def imports() -> dict:
    homes = reexports()
    edges: dict = {}
    for file in sorted(SRC.rglob("*.rs")):
        # src/bin holds binaries: crates of their own, whose `crate::` is not the library's.
        if file.relative_to(SRC).parts[0] == "bin":
            continue
        here = module_of(file)
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


def main() -> int:
    edges = imports()
    rank = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    bad = []
    for here in sorted(edges, key=lambda m: (rank.get(m, 99), m)):
        targets = sorted(edges[here], key=lambda m: (rank.get(m, 99), m))
        print(f"{here:>8} -> {', '.join(targets)}")
        for target in targets:
            if rank.get(here, 99) < rank.get(target, 99):
                bad.append(f"{here} imports {target}, a higher layer")
    if "--check" in sys.argv:
        unknown = sorted({m for m in edges} - set(rank))
        for m in unknown:
            bad.append(f"{m} is in no layer")
        for line in bad:
            print("layers:", line, file=sys.stderr)
        if bad:
            return 1
        print("layers: every import points down or sideways")
    return 0


if __name__ == "__main__":
    sys.exit(main())

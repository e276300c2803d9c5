"""Ground truth for the DMR++ tests: every dataset of the HDF5 files in bes/, read by h5py.

bes/ holds pairs of an HDF5 (or NetCDF-4) file and its DMR++ sidecar from OPeNDAP's bes
(modules/dmrpp_module/data, commit dddc1ae5, LGPL; see bes/PROVENANCE), unchanged. For each
dataset h5py reads into a numpy array of fixed-size values, this writes
`bes/FILE.PATH.npy` (PATH with `/` as `~`), numbers little-endian. netCDF-4's dimensions
without a variable are left out, as every scanner leaves them out; so are datasets with chunks
never written whose fill time is "never" (H5D_FILL_TIME_NEVER): HDF5 leaves their values
undefined (h5py gives whatever its buffer held).

    python make.py     (h5py, numpy)
"""

from pathlib import Path

import math

import h5py
import numpy as np


def undefined(dataset) -> bool:
    """Whether some of the dataset's values are undefined: chunks never written, fill time never."""
    if dataset.id.get_create_plist().get_fill_time() != h5py.h5d.FILL_TIME_NEVER or not dataset.chunks:
        return False
    grid = math.prod(math.ceil(s / c) for s, c in zip(dataset.shape, dataset.chunks))
    return dataset.id.get_num_chunks() < grid


here = Path(__file__).parent / "bes"
for old in here.glob("*.npy"):
    old.unlink()
for file in sorted(here.iterdir()):
    if file.suffix not in (".h5", ".nc4"):
        continue
    with h5py.File(file, "r") as f:
        datasets = []
        f.visititems(lambda name, obj: datasets.append((name, obj)) if isinstance(obj, h5py.Dataset) else None)
        for name, dataset in datasets:
            kind = dataset.dtype.kind
            base = h5py.check_vlen_dtype(dataset.dtype)
            if base is not None and base.kind in "iu" and dataset.ndim == 1:
                # bes's form of a variable-length array (its dmrpp:missingdata): each row padded
                # with zeros to the longest, and the rows' lengths as NAME_vlen_index.
                rows = list(dataset[()])
                longest = max(len(r) for r in rows)
                padded = np.zeros((len(rows), longest), dtype=base.newbyteorder("<"))
                for i, row in enumerate(rows):
                    padded[i, : len(row)] = row
                np.save(here / f"{file.name}.{name.replace('/', '~')}.npy", padded)
                lengths = np.array([len(r) for r in rows], dtype="<i4")
                np.save(here / f"{file.name}.{name.replace('/', '~')}_vlen_index.npy", lengths)
                continue
            if kind not in "biufS" or dataset.dtype.names is not None:
                continue
            label = dataset.attrs.get("NAME", b"")
            if isinstance(label, bytes) and label.startswith(b"This is a netCDF dimension but not a netCDF variable"):
                continue
            if undefined(dataset):
                print(file.name, name, "left out: chunks never written, fill time never")
                continue
            values = dataset[()]
            values = np.asarray(values)
            if kind in "iuf":
                values = values.astype(values.dtype.newbyteorder("<"))
            np.save(here / f"{file.name}.{name.replace('/', '~')}.npy", values.copy(order="C"))
            print(file.name, name, values.dtype, values.shape)

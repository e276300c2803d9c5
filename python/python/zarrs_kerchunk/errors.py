"""The exceptions of zarrs_kerchunk, each naming what went wrong: the key, the URL and the cause.

Opening references and the tools raise exceptions of the families Python users look for:

- :class:`ReferencesNotFoundError` (a :class:`FileNotFoundError`): the document, or a file to scan,
  does not exist;
- :class:`AccessDeniedError` (a :class:`PermissionError`): the access policy refused a location
  (``allowed_prefixes``, a remote document naming local files), or the service refused the
  credentials;
- :class:`InvalidReferencesError` (a :class:`ValueError`): malformed references or options;
- :class:`TargetUnreachableError` (an :class:`OSError`): a location that could not be read.

A store's read of a key raises :class:`ReferenceReadError`, a :class:`RuntimeError`, whatever the
cause. zarr reads :class:`FileNotFoundError` (and every store's ``OSError`` family) from a store as
"missing, use the fill value": a reference whose target cannot be read must never look like a
missing chunk, so it is never one of those.
"""


class KerchunkError(Exception):
    """The base of every error zarrs_kerchunk raises."""


class ReferencesNotFoundError(KerchunkError, FileNotFoundError):
    """The references (or a file to scan) do not exist at the location given."""


class AccessDeniedError(KerchunkError, PermissionError):
    """The access policy, or the service, refused to read a location."""


class InvalidReferencesError(KerchunkError, ValueError):
    """The references, or the options given, are malformed."""


class TargetUnreachableError(KerchunkError, OSError):
    """A location could not be read (the network, the service, the file system)."""


class ReferenceReadError(KerchunkError, RuntimeError):
    """A key's reference could not be read: its target is unreachable, refused, too short or changed.

    Never a fill value: zarr propagates this error to the caller.
    """


__all__ = [
    "AccessDeniedError",
    "InvalidReferencesError",
    "KerchunkError",
    "ReferenceReadError",
    "ReferencesNotFoundError",
    "TargetUnreachableError",
]

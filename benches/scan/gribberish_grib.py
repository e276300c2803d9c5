"""gribberish's own scan of a GRIB2 file (its kerchunk mapper's message metadata pass):
every message read whole and its metadata parsed, as gribberish.kerchunk.mapper does."""
import json, sys, time
import gribberish
start = time.perf_counter()
data = open(sys.argv[1], "rb").read()
mapping = gribberish.parse_grib_mapping(data)
print(json.dumps({"seconds": round(time.perf_counter() - start, 3), "entries": len(mapping)}))

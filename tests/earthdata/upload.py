"""Put the walk-through's granules and sidecars (`tests/earthdata/granules/`) in the bucket the
Earthdata stand-ins' DAAC serves (zk-data, under `walkthrough/`), with the bucket's own keys, as a
DAAC's ingest does. Needs boto3 and the variables `.ci/servers.sh start` prints.

    python tests/earthdata/upload.py [FOLDER]
"""

import os
import sys
from pathlib import Path

import boto3

folder = sys.argv[1] if len(sys.argv) > 1 else "walkthrough"
s3 = boto3.client("s3", endpoint_url=os.environ["ZK_S3"], region_name="us-east-1",
                  aws_access_key_id=os.environ["ZK_S3_DATA_KEY"],
                  aws_secret_access_key=os.environ["ZK_S3_DATA_SECRET"])
for path in sorted((Path(__file__).parent / "granules").iterdir()):
    s3.put_object(Bucket="zk-data", Key=f"{folder}/{path.name}", Body=path.read_bytes())
    print(f"s3://zk-data/{folder}/{path.name}")

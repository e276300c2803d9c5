"""Buckets, containers and keys on the emulators started by .ci/servers.sh.

- S3 (moto): two users, each with its own keys and allowed only its own
  bucket (zk-refs, zk-data). moto checks requests against IAM once
  INITIAL_NO_AUTH_ACTION_COUNT requests have been made; the eight IAM
  requests made first here are those. Each user then creates its bucket.
- Azure (azurite): container zk-refs in account zkone, zk-data in zktwo.

Prints the S3 keys as shell exports for the tests.
"""
import json
import sys

import boto3
from azure.storage.blob import BlobServiceClient

s3, azure, azure_keys = sys.argv[1:4]

iam = boto3.client("iam", endpoint_url=s3, region_name="us-east-1",
                   aws_access_key_id="setup", aws_secret_access_key="setup")
exports = []
keys = {}
for bucket in ["zk-refs", "zk-data"]:
    iam.create_user(UserName=bucket)
    key = iam.create_access_key(UserName=bucket)["AccessKey"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*",
                       "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}],
    }
    arn = iam.create_policy(PolicyName=f"{bucket}-only", PolicyDocument=json.dumps(policy))["Policy"]["Arn"]
    iam.attach_user_policy(UserName=bucket, PolicyArn=arn)
    keys[bucket] = key
# From here on moto checks every request.
for bucket, key in keys.items():
    user = boto3.client("s3", endpoint_url=s3, region_name="us-east-1",
                        aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    user.create_bucket(Bucket=bucket)
    name = bucket.replace("zk-", "").upper()
    exports.append(f"ZK_S3_{name}_KEY={key['AccessKeyId']} ZK_S3_{name}_SECRET={key['SecretAccessKey']}")

accounts = dict(pair.split(":", 1) for pair in azure_keys.split(","))
for (account, key), container in zip(accounts.items(), ["zk-refs", "zk-data"]):
    connection = (f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
                  f"BlobEndpoint={azure}/{account};")
    BlobServiceClient.from_connection_string(connection).create_container(container)

print("export " + " ".join(exports))

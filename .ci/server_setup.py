"""Buckets, containers and keys on the emulators started by .ci/servers.sh.

    server_setup.py s3-azure S3 AZURE AZURE_KEYS
- S3 (moto): two users, each with its own keys and allowed only its own
  bucket (zk-refs, zk-data), and a role reading zk-data that zk-data's user
  may take (temporary credentials, with a session token moto checks). moto
  checks requests against IAM once INITIAL_NO_AUTH_ACTION_COUNT requests have
  been made; the ten IAM requests made first here are those. Each user then
  creates its bucket.
- Azure (azurite): container zk-refs in account zkone, zk-data in zktwo.
Prints the S3 keys as shell exports for the tests.

    server_setup.py gcs STATE FRONT
- GCS (fake-gcs-server behind gcs_front.py at FRONT): two service accounts, each allowed only
  its own bucket (zk-refs, zk-data). Each account's key file, as Google issues it and
  object_store reads it (`gcs_base_url` pointing it at FRONT), is written in STATE; the
  accounts' public keys, for the front, in STATE/gcs-accounts.json; the buckets are folders of
  STATE/gcs-data, which the emulator loads. Prints the key files' paths as shell exports.
"""

import json
import sys
from pathlib import Path

BUCKETS = ["zk-refs", "zk-data"]
# The role `.ci/earthdata.py` hands out temporary credentials for (moto's account id).
ROLE = "zk-data-temporary"
ROLE_ARN = f"arn:aws:iam::123456789012:role/{ROLE}"


def s3_and_azure(s3: str, azure: str, azure_keys: str) -> None:
    import boto3
    from azure.storage.blob import BlobServiceClient

    iam = boto3.client("iam", endpoint_url=s3, region_name="us-east-1",
                       aws_access_key_id="setup", aws_secret_access_key="setup")
    exports = []
    keys = {}
    for bucket in BUCKETS:
        iam.create_user(UserName=bucket)
        key = iam.create_access_key(UserName=bucket)["AccessKey"]
        policy = {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*",
                           "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}],
        }
        if bucket == "zk-data":
            # The data user may take the role a credentials endpoint hands out, as a DAAC does.
            policy["Statement"].append({"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": ROLE_ARN})
        arn = iam.create_policy(PolicyName=f"{bucket}-only", PolicyDocument=json.dumps(policy))["Policy"]["Arn"]
        iam.attach_user_policy(UserName=bucket, PolicyArn=arn)
        keys[bucket] = key
    # The role temporary credentials are for: reading zk-data, taken by its user.
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
             "Principal": {"AWS": "arn:aws:iam::123456789012:user/zk-data"}}]}
    iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(trust))
    read = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*",
            "Resource": ["arn:aws:s3:::zk-data", "arn:aws:s3:::zk-data/*"]}]}
    iam.put_role_policy(RoleName=ROLE, PolicyName="zk-data-read", PolicyDocument=json.dumps(read))
    # From here on moto checks every request.
    for bucket, key in keys.items():
        user = boto3.client("s3", endpoint_url=s3, region_name="us-east-1",
                            aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
        user.create_bucket(Bucket=bucket)
        name = bucket.replace("zk-", "").upper()
        exports.append(f"ZK_S3_{name}_KEY={key['AccessKeyId']} ZK_S3_{name}_SECRET={key['SecretAccessKey']}")

    accounts = dict(pair.split(":", 1) for pair in azure_keys.split(","))
    for (account, key), container in zip(accounts.items(), BUCKETS):
        connection = (f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
                      f"BlobEndpoint={azure}/{account};")
        BlobServiceClient.from_connection_string(connection).create_container(container)

    print("export " + " ".join(exports))


def gcs(state: Path, front: str) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    public, exports = [], []
    for bucket in BUCKETS:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        email = f"{bucket}@zarrs-kerchunk-tests.iam.gserviceaccount.com"
        private = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        account = {"type": "service_account", "client_email": email, "private_key_id": f"{bucket}-key",
                   "private_key": private.decode(), "gcs_base_url": front}
        path = state / f"gcs-{bucket}.json"
        path.write_text(json.dumps(account))
        path.chmod(0o600)
        pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        public.append({"email": email, "key_id": account["private_key_id"], "public_key": pem.decode(),
                       "bucket": bucket})
        exports.append(f"ZK_GCS_{bucket.removeprefix('zk-').upper()}_ACCOUNT={path}")
        (state / "gcs-data" / bucket).mkdir(parents=True, exist_ok=True)
    (state / "gcs-accounts.json").write_text(json.dumps(public))
    print("export " + " ".join(exports))


if __name__ == "__main__":
    if sys.argv[1] == "s3-azure":
        s3_and_azure(*sys.argv[2:5])
    elif sys.argv[1] == "gcs":
        gcs(Path(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(f"usage: {sys.argv[0]} s3-azure S3 AZURE AZURE_KEYS | gcs STATE FRONT")

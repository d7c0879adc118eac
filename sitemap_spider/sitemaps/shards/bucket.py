"""Publishing to object storage (``SITEMAP_OUTPUT_URI=s3://bucket/prefix/``): S3 and the S3 API of
R2, MinIO, Spaces or B2, through botocore (the library under Scrapy's own S3 feed storage).

The set is built and published in the local output directory as always (``SITEMAP_OUTPUT_DIR``,
the working copy), then uploaded beside the live set, under a staging prefix; only when every
file is there is each copied into place inside the bucket (a request per file, no upload), the
sitemap files first, then the files published beside them (the IndexNow key), the index last.
The index is the commit point: a reader sees the old index, naming files that all exist, until
the new one is written, and the old set's files that the new index no longer names are deleted
only after it. A failure in the upload (a refused file, the network) leaves the live set as it
was, and the publish fails. A failure while copying (requests inside the bucket, rarer) can leave
some files of the new set under the old index, never a missing file; the next publish compares
with what the bucket then serves and puts the whole set in place.

A file whose object already holds its bytes (the object's size, and its ETag: an MD5 for an object
put whole, as every object of ours is) with the headers it would be given is neither uploaded nor
copied: the object, its ETag and its Last-Modified stay, and a recrawl that changes nothing makes
no search engine download the set again.

Before a set is built, the working copy is made the bucket's published set (:meth:`Bucket.pull`),
so that the comparison with the previous set (changes, IndexNow) and the shrink guard read what
the bucket serves, whichever machine published it last. The crawl history stays local.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sitemap_spider.sitemaps.errors import SitemapError
from sitemap_spider.sitemaps.names import SHARD_FILE_PATTERN, STAGING_PREFIX, listed_file_name
from sitemap_spider.sitemaps.xml.elements import index_locs

if TYPE_CHECKING:
    from collections.abc import Iterator

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20


class BucketError(SitemapError):
    """The bucket could not be read or written: nothing more is published there."""


def content_headers(name: str) -> dict[str, str]:
    """The object's Content-Type for a file of the set: a ``.xml.gz`` file is a gzip file (no
    Content-Encoding, which would make clients unzip it on the way and store XML under .gz)."""
    if name.endswith(".gz"):
        return {"ContentType": "application/gzip"}
    if name.endswith((".xml", ".xsl")):  # a browser applies a stylesheet served as XML only
        return {"ContentType": "application/xml; charset=utf-8"}
    return {"ContentType": "text/plain; charset=utf-8"}


def parse_bucket_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> ("bucket", "some/prefix/"); ValueError if it is not one."""
    parts = urlsplit(uri)
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"must be s3://bucket/ or s3://bucket/prefix/, got {uri!r}")
    prefix = parts.path.lstrip("/")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return parts.netloc, prefix


@dataclass(frozen=True)
class BucketTarget:
    """Where a set is published in object storage, and how to reach it (Scrapy's AWS_* settings)."""

    uri: str
    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None
    endpoint_url: str | None = None
    region: str | None = None
    verify: bool | str | None = None
    use_ssl: bool = True

    def __post_init__(self) -> None:
        parse_bucket_uri(self.uri)

    @property
    def bucket(self) -> str:
        return parse_bucket_uri(self.uri)[0]

    @property
    def prefix(self) -> str:
        return parse_bucket_uri(self.uri)[1]

    def client(self) -> Any:
        """A botocore S3 client (imported here: botocore is the ``[s3]`` extra)."""
        from botocore.config import Config  # type: ignore[import-untyped]  # noqa: PLC0415
        from botocore.session import get_session  # type: ignore[import-untyped]  # noqa: PLC0415

        return get_session().create_client(
            "s3",
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            aws_session_token=self.session_token,
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            verify=self.verify,
            use_ssl=self.use_ssl,
            config=Config(retries={"mode": "standard", "max_attempts": 4}),
        )


class Bucket:
    """The published set in a bucket, against its local working copy."""

    def __init__(self, target: BucketTarget) -> None:
        self.target = target
        self.bucket = target.bucket
        self.prefix = target.prefix
        try:
            from botocore.exceptions import (  # type: ignore[import-untyped]  # noqa: PLC0415
                BotoCoreError,
                ClientError,
            )
        except ImportError as exc:  # the setting is checked at start-up
            raise BucketError(f"{target.uri} needs botocore: pip install 'sitemap_spider[s3]'") from exc
        self._errors: tuple[type[BaseException], ...] = (BotoCoreError, ClientError)
        try:
            self._client = target.client()
        except (BotoCoreError, ValueError) as exc:  # a bad endpoint URL, region or credentials file
            raise BucketError(f"cannot reach {target.uri}: {exc}") from exc

    def pull(self, local_dir: Path, index_name: str, extras: Sequence[str] = ()) -> None:
        """Make ``local_dir`` hold the set the bucket publishes now (nothing, if it publishes none),
        and ``extras``, files published beside it that are compared with their new versions
        (llms.txt): each as the bucket has it, or none."""
        try:
            for name in extras:
                published = self._get(name)
                if published is None:
                    (local_dir / name).unlink(missing_ok=True)
                elif not (local_dir / name).is_file() or (local_dir / name).read_bytes() != published:
                    _write_whole(local_dir / name, [published])
            index = self._get(index_name)
            local_index = local_dir / index_name
            if index is None:
                # Nothing published there yet: no previous set, whatever the working copy holds.
                for path in self._local_set(local_dir):
                    path.unlink()
                local_index.unlink(missing_ok=True)
                return
            names = _listed_names(index)
            if local_index.is_file() and local_index.read_bytes() == index and all(
                (local_dir / name).is_file() for name in names
            ):
                return  # the working copy is what the bucket serves (this machine published it)
            logger.info(
                "Reading the set published in %s (%d files) to compare the new one with it",
                self.target.uri, len(names),
            )  # fmt: skip
            for name in names:
                self._download(name, local_dir / name)
            _write_whole(local_index, [index])
            for path in self._local_set(local_dir):
                if path.name not in names:
                    path.unlink()
        except self._errors as exc:
            raise BucketError(f"cannot read the published set in {self.target.uri}: {exc}") from exc

    def push(
        self, local_dir: Path, shard_names: Sequence[str], extra_names: Sequence[str], index_name: str,
        stale_names: Sequence[str] = (),
    ) -> None:
        """Upload the set's files to a staging prefix, copy them into place inside the bucket, the
        index last; then delete the old set's files that the new index no longer lists, and the
        ``stale_names`` files (an earlier set's, the new one has none)."""
        staging = f"{self.prefix}{STAGING_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}/"
        names = [*shard_names, *extra_names, index_name]
        try:
            self._delete_prefix(self.prefix + STAGING_PREFIX)  # left by a publish that died mid-way
            unchanged = self._unchanged(local_dir, names)
            names = [name for name in names if name not in unchanged]
            # The upload, the long part, goes beside the live set: a failure there changes nothing.
            for name in names:
                with open(local_dir / name, "rb") as body:
                    self._client.put_object(
                        Bucket=self.bucket, Key=staging + name, Body=body, **content_headers(name)
                    )
            # A copy inside the bucket per file, the index last: the index is the commit point.
            for name in names:
                self._client.copy_object(
                    Bucket=self.bucket, Key=self.prefix + name,
                    CopySource={"Bucket": self.bucket, "Key": staging + name},
                    MetadataDirective="COPY",
                )  # fmt: skip
            current = set(shard_names)
            listed = list(self._listed_keys(self.prefix))
            stale = [key for key, name in listed if SHARD_FILE_PATTERN.match(name) and name not in current]
            for key in stale:
                logger.info("Removing stale sitemap file s3://%s/%s", self.bucket, key)
                self._client.delete_object(Bucket=self.bucket, Key=key)
            for name in stale_names:
                logger.info("Removing %s of the earlier set from s3://%s/%s", name, self.bucket, self.prefix)
                self._client.delete_object(Bucket=self.bucket, Key=self.prefix + name)
        except self._errors as exc:
            raise BucketError(f"publishing to {self.target.uri} failed: {exc}") from exc
        finally:
            try:
                self._delete_prefix(staging)
            except self._errors as exc:
                logger.warning("Cleaning up s3://%s/%s failed: %s", self.bucket, staging, exc)
        logger.info(
            "Published %s and %d sitemap files in %s: %d files new or changed, %d unchanged left in place",
            index_name, len(shard_names), self.target.uri, len(names), len(unchanged),
        )  # fmt: skip

    def _unchanged(self, local_dir: Path, names: Sequence[str]) -> set[str]:
        """The ``names`` whose live object holds the bytes of the local file, with the headers
        ``push`` would give it. The size first; then the ETag against the file's MD5 (an ETag that
        is not one, of an object put in parts or encrypted with KMS, never matches); then a HEAD for
        the headers, which a listing does not give."""
        live = {item["Key"][len(self.prefix) :]: item for item in self._listed_objects(self.prefix)}
        same = set()
        for name in names:
            item = live.get(name)
            path = local_dir / name
            if item is None or item.get("Size") != path.stat().st_size:
                continue
            if item.get("ETag", "").strip('"') != _md5_of(path):
                continue
            head = self._client.head_object(Bucket=self.bucket, Key=self.prefix + name)
            wanted = content_headers(name)["ContentType"]
            if head.get("ContentType") == wanted and not head.get("ContentEncoding"):
                same.add(name)
        return same

    def _delete_prefix(self, prefix: str) -> None:
        for key, _ in self._listed_keys(prefix, delimiter=""):
            self._client.delete_object(Bucket=self.bucket, Key=key)

    def _get(self, name: str) -> bytes | None:
        try:
            answer = self._client.get_object(Bucket=self.bucket, Key=self.prefix + name)
        except self._errors as exc:
            if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        data: bytes = answer["Body"].read()
        return data

    def _download(self, name: str, path: Path) -> None:
        answer = self._client.get_object(Bucket=self.bucket, Key=self.prefix + name)
        _write_whole(path, iter(lambda: answer["Body"].read(_CHUNK), b""))

    def _listed_keys(self, prefix: str, delimiter: str = "/") -> Iterator[tuple[str, str]]:
        """(key, the rest of it after ``prefix``) of the objects under ``prefix`` (directly under
        it with the default delimiter)."""
        for item in self._listed_objects(prefix, delimiter):
            yield item["Key"], item["Key"][len(prefix) :]

    def _listed_objects(self, prefix: str, delimiter: str = "/") -> Iterator[dict[str, Any]]:
        """The listing's entry (Key, Size, ETag, ...) of each object under ``prefix``."""
        paginator = self._client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix, Delimiter=delimiter):
            yield from page.get("Contents", ())

    @staticmethod
    def _local_set(local_dir: Path) -> list[Path]:
        files = local_dir.iterdir()
        return [path for path in files if SHARD_FILE_PATTERN.match(path.name) and path.is_file()]


def _listed_names(index: bytes) -> list[str]:
    """The file names a sitemap index lists (the last path segment of each ``<loc>``)."""
    try:
        locs = list(index_locs(io.BytesIO(index)))
    except Exception as exc:  # lxml's XMLSyntaxError, untyped here
        raise BucketError(f"the published index cannot be read: {exc}") from exc
    names = []
    for loc in locs:
        name = listed_file_name(loc)
        if name is None:
            raise BucketError(f"the published index lists {loc!r}, not a file of this set")
        names.append(name)
    return names


def _md5_of(path: Path) -> str:
    """The hex MD5 of a file: the ETag S3 gives an object put whole, unencrypted or SSE-S3."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as data:
        while block := data.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _write_whole(path: Path, chunks: Iterable[bytes]) -> None:
    """Write ``path`` under a hidden name, then rename it: a failure leaves neither half a file nor litter."""
    partial = path.with_name(f".{path.name}.part")
    try:
        with open(partial, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)

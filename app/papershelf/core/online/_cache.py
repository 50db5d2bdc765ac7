"""The online look-ups' answers kept on disk (Http's cache): one JSON file per request URL and
Accept header, 14 days. A cache is a rebuildable copy: a file that cannot be read or written is
ignored, never an error."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from papershelf.core.online.records import Response

CACHE_SECONDS = 14 * 24 * 3600
CACHED_STATUSES = (200, 404)


class AnswerCache:
    """The answers kept under `folder` (one sub-folder per service)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def key(url: str, accept: str) -> str:
        return hashlib.sha256(f"{accept}\n{url}".encode()).hexdigest()

    def file(self, service: str, key: str) -> Path:
        return self.folder / service / f"{key}.json"

    def read(self, service: str, key: str) -> Response | None:
        """The kept answer, or None: absent, too old, or damaged (a damaged file is asked again
        and rewritten)."""
        try:
            data = json.loads(self.file(service, key).read_text(encoding="utf-8"))
            saved, status, text, url = data["saved"], data["status"], data["text"], data["url"]
            headers, content = data["headers"], data["content"]
            if not (
                isinstance(saved, (int, float))
                and status in CACHED_STATUSES  # a 429 or 500 kept by another version is no answer
                and isinstance(text, str)
                and isinstance(content, str)
                and isinstance(url, str)
                and "mailto=" not in url  # kept by a version that said the contact with the address
                and isinstance(headers, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
            ):
                return None
            body = base64.b64decode(content, validate=True)
        except (OSError, ValueError, KeyError, TypeError):  # binascii.Error is a ValueError
            return None
        if not 0 <= time.time() - saved < CACHE_SECONDS:
            return None
        return Response(status=status, text=text, url=url, headers=headers, cached=True, content=body)

    def write(self, service: str, key: str, url: str, accept: str, response: Response) -> None:
        """Keep an answer: a temporary file renamed over the old one, so a reader never sees half a
        file. A cache that cannot be written (full disk, read-only folder) is skipped silently."""
        keep = {k: v for k, v in response.headers.items() if k in ("content-type", "retry-after")}
        data = {
            "saved": time.time(),
            "url": response.url,
            "request": url,
            "accept": accept,
            "status": response.status,
            "headers": keep,
            "text": response.text,
            "content": base64.b64encode(response.content).decode("ascii"),
        }
        target = self.file(service, key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(data, out, ensure_ascii=False)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass

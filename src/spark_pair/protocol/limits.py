"""Size limits of what a server sends (docs/headless.md, "Size limits"): whatever a broken or
hostile server answers, spark-pair holds no more than these of it, and says which limit ended
the answer.

`Inflater` decodes a body in its Content-Encoding (spark-pair asks for none; a server may send
gzip or deflate anyway) a bounded step at a time, counting the decoded bytes against a limit:
a small compressed piece never becomes one huge buffer.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

from ..base.errors import ProtocolError, TooLarge

MAX_MESSAGE_BYTES = 8 << 20  # one SSE line or event, one WebSocket message
MAX_REPLY_BYTES = 64 << 20  # a streamed reply, decoded, in all
MAX_BODY_BYTES = 16 << 20  # an answer that is not streamed (the model list), decoded
MAX_ERROR_BODY_BYTES = 64 << 10  # what is read of an error answer's body (the rest is not read)
INFLATE_STEP_BYTES = 256 << 10  # a compressed body is inflated this much at a time


def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def too_large(url: str, what: str, limit: int) -> TooLarge:
    """The error for `what` (e.g. "a streamed reply") over `limit` bytes."""
    return TooLarge(f"{url} sent {what} of more than {_mib(limit)} (spark-pair's limit): it "
                    "was not read further", url=url, limit=limit)


class Inflater:
    """The decoded bytes of a body in `encoding` (a Content-Encoding value), counted against
    `limit`: over it, TooLarge (`what` names the body), or with `cut` the bytes up to it and
    then nothing more. An encoding other than gzip or deflate is a ProtocolError."""

    def __init__(self, encoding: str, url: str, limit: int, what: str, *, cut: bool = False
                 ) -> None:
        self.url, self.limit, self.what, self.cut = url, limit, what, cut
        self.total = 0
        self.full = False  # `cut` and the limit reached: the body's end for its reader
        name = encoding.strip().lower()
        self._raw_deflate = False
        if name in ("", "identity"):
            self._z = None
        elif name in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif name == "deflate":  # zlib-wrapped as the standard says; raw if it is not
            self._z = zlib.decompressobj()
            self._raw_deflate = True
        else:
            raise ProtocolError(f"{url} answered in the {encoding!r} content encoding, which "
                                "spark-pair does not read (it asks for none)", url=url)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of `data` (the next bytes of the body)."""
        z = self._z
        if z is None:
            yield self._counted(data)
            return
        while data and not self.full:
            try:
                out = z.decompress(data, INFLATE_STEP_BYTES)
            except zlib.error as exc:
                if self._raw_deflate and not self.total:  # deflate without its zlib header
                    self._raw_deflate = False
                    self._z = z = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise ProtocolError(f"{self.url} sent a compressed body that is broken: {exc}",
                                    url=self.url) from None
            self._raw_deflate = False
            data = z.unconsumed_tail
            if out:
                yield self._counted(out)
            if z.eof:
                return

    def _counted(self, data: bytes) -> bytes:
        self.total += len(data)
        if self.total > self.limit:
            if not self.cut:
                raise too_large(self.url, self.what, self.limit)
            data = data[:len(data) - (self.total - self.limit)]
            self.total, self.full = self.limit, True
        return data

    async def decode(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """`feed` over a body's chunks (until `full`)."""
        async for chunk in chunks:
            for piece in self.feed(chunk):
                if piece:
                    yield piece
            if self.full:
                return


async def read_body(chunks: AsyncIterator[bytes], inflater: Inflater) -> bytes:
    """A whole body, decoded (up to the inflater's limit)."""
    return b"".join([piece async for piece in inflater.decode(chunks)])

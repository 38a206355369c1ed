//! What a connection must show before hyper gets it, and the socket it gets: the defences
//! against clients that hold a connection slot without using it.
//!
//! * hyper's head deadline (`header_read_timeout`) starts with a head's first byte, so a
//!   connection that never sends one — a silent TCP connection, or a TLS session that goes
//!   quiet after its handshake — would hold its slot forever: [`first_byte`] waits for that
//!   byte with the same deadline and hands it back to hyper ([`Primed`]).
//! * Each socket keeps at most [`NOTSENT_LOWAT`] bytes that are not yet sent
//!   (`TCP_NOTSENT_LOWAT`), so a write waits only until a slow reader takes about that much,
//!   whatever the kernel's autotuned send buffer holds in flight: the send timeout then
//!   measures a client that takes nothing, not megabytes of buffer draining at its pace.
//! * Connections speak HTTP/1.1 only (the listener's ALPN offers nothing else): an HTTP/2
//!   connection multiplexes streams whose flow-control windows can hold answers, and the
//!   work behind them, with no socket write ever blocking, out of reach of these defences.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// Unsent bytes a socket holds before a write waits.
pub const NOTSENT_LOWAT: u32 = 16 << 10;

/// Sets [`NOTSENT_LOWAT`] on an accepted connection (a failure is only logged: the send
/// timeout then counts coarser).
pub fn bound_unsent(stream: &tokio::net::TcpStream) {
    if let Err(e) = socket2::SockRef::from(stream).set_tcp_notsent_lowat(NOTSENT_LOWAT) {
        tracing::debug!(error = %e, "TCP_NOTSENT_LOWAT");
    }
}

/// A stream whose first byte was read ahead: it is given back before the stream's own.
pub struct Primed<S> {
    first: Option<u8>,
    inner: S,
}

/// `stream` with its first byte, if one arrives within `limit`; `None` when the client sends
/// nothing in time, closes, or fails.
pub async fn first_byte<S: AsyncRead + Unpin>(mut stream: S, limit: Duration) -> Option<Primed<S>> {
    let mut byte = [0u8; 1];
    match tokio::time::timeout(limit, stream.read(&mut byte)).await {
        Ok(Ok(1)) => Some(Primed {
            first: Some(byte[0]),
            inner: stream,
        }),
        _ => None,
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Primed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() > 0 {
            if let Some(b) = self.first.take() {
                buf.put_slice(&[b]);
                return Poll::Ready(Ok(()));
            }
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Primed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn the_first_byte_is_given_back_and_silence_is_refused() {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        let mut primed = first_byte(server, Duration::from_secs(1)).await.unwrap();
        let mut got = [0u8; 16];
        primed.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"GET / HTTP/1.1\r\n");

        let (_quiet, server) = tokio::io::duplex(64);
        assert!(first_byte(server, Duration::from_millis(50))
            .await
            .is_none());
        let (closed, server) = tokio::io::duplex(64);
        drop(closed);
        assert!(first_byte(server, Duration::from_secs(1)).await.is_none());
    }
}

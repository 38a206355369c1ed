//! What a request gets when it cannot be answered: a status and the JSON body
//! `{"detail": "..."}` that Caterva2's clients show. Details never hold server paths or
//! internal errors; those go to the log.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// What the client reads.
    pub detail: String,
    /// `Retry-After` seconds (503).
    pub retry_after: Option<u32>,
    /// `Content-Range: bytes */N` (416).
    pub total: Option<u64>,
}

impl ApiError {
    /// An error of `status` with `detail`.
    pub fn new(status: StatusCode, detail: impl Into<String>) -> ApiError {
        ApiError {
            status,
            detail: detail.into(),
            retry_after: None,
            total: None,
        }
    }

    /// 400.
    pub fn bad_request(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 404 with the generic detail (nothing is said about what exists).
    #[must_use]
    pub fn not_found() -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "Not Found")
    }

    /// 413.
    pub fn too_large(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, detail)
    }

    /// 416 for a body of `total` bytes.
    pub fn range(detail: impl Into<String>, total: Option<u64>) -> ApiError {
        ApiError {
            total,
            ..ApiError::new(StatusCode::RANGE_NOT_SATISFIABLE, detail)
        }
    }

    /// 422 (what FastAPI answers for a missing or mistyped parameter).
    pub fn unprocessable(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, detail)
    }

    /// 503 with `Retry-After`.
    pub fn unavailable(detail: impl Into<String>, retry_after: u32) -> ApiError {
        ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, detail)
        }
    }

    /// 500 with a generic detail; `log` goes to the log only.
    pub fn internal(log: impl std::fmt::Display) -> ApiError {
        tracing::error!(error = %log, "internal error");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the server could not answer this request",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "detail": self.detail }).to_string();
        let mut r = (self.status, body).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(s) = self.retry_after {
            h.insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        if let Some(n) = self.total {
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{n}")) {
                h.insert(header::CONTENT_RANGE, v);
            }
        }
        if self.status == StatusCode::UNAUTHORIZED {
            h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

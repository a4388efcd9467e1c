//! The HTTP front: one handler for every path, which reads the body (bounded), parses, executes
//! and renders in the client's protocol.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::response::{IntoResponse, Response as HttpResponse};
use http::{HeaderValue, Method, StatusCode};

use super::error::{ErrorCode, SqsError};
use super::parse::{parse_request, protocol_of};
use super::render_json;
use super::render_xml;
use super::request::Protocol;
use super::response::Response;
use super::service::Service;

/// What the handler needs.
#[derive(Debug)]
pub struct Front {
    pub service: Arc<Service>,
    pub max_request_bytes: usize,
    requests: AtomicU64,
}

impl Front {
    pub fn new(service: Arc<Service>, max_request_bytes: usize) -> Arc<Front> {
        Arc::new(Front {
            service,
            max_request_bytes,
            requests: AtomicU64::new(0),
        })
    }

    fn request_id(&self) -> String {
        let n = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        format!("00000000-0000-4000-8000-{n:012x}")
    }
}

pub fn router(front: Arc<Front>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(front)
}

async fn handle(State(front): State<Arc<Front>>, req: HttpRequest) -> HttpResponse {
    let (parts, body) = req.into_parts();
    let protocol = protocol_of(&parts.headers);
    let request_id = front.request_id();
    let bytes = match axum::body::to_bytes(body, front.max_request_bytes).await {
        Ok(b) => b,
        Err(_) => {
            let e = SqsError::new(
                ErrorCode::MalformedRequest,
                format!(
                    "The request body could not be read or is over {} bytes.",
                    front.max_request_bytes
                ),
            );
            return error(protocol, &e, &request_id);
        }
    };
    let body: &[u8] = if parts.method == Method::GET && protocol == Protocol::Query {
        parts.uri.query().unwrap_or_default().as_bytes()
    } else {
        &bytes
    };
    let request = match parse_request(parts.uri.path(), &parts.headers, body) {
        Ok(r) => r,
        Err(e) => return error(protocol, &e, &request_id),
    };
    let action = request.action.name();
    match front.service.execute(request).await {
        Ok(r) => success(protocol, action, &r, &request_id),
        Err(e) => error(protocol, &e, &request_id),
    }
}

fn success(protocol: Protocol, action: &str, r: &Response, request_id: &str) -> HttpResponse {
    match protocol {
        Protocol::Json => reply(StatusCode::OK, JSON, render_json::response(r), request_id),
        Protocol::Query => reply(
            StatusCode::OK,
            XML,
            render_xml::response(action, r, request_id),
            request_id,
        ),
    }
}

/// An error in AWS's shape: JSON `{"__type", "message"}` with `x-amzn-query-error`, or an XML
/// `ErrorResponse`.
pub fn error(protocol: Protocol, e: &SqsError, request_id: &str) -> HttpResponse {
    let status = StatusCode::from_u16(e.code.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = match protocol {
        Protocol::Json => reply(status, JSON, render_json::error(e), request_id),
        Protocol::Query => reply(status, XML, render_xml::error(e, request_id), request_id),
    };
    if let Ok(v) = HeaderValue::from_str(&format!("{};{}", e.code.query_code(), e.code.fault())) {
        resp.headers_mut().insert("x-amzn-query-error", v);
    }
    resp
}

const JSON: &str = "application/x-amz-json-1.0";
const XML: &str = "text/xml";

fn reply(
    status: StatusCode,
    content_type: &'static str,
    body: String,
    request_id: &str,
) -> HttpResponse {
    let mut resp = (status, Body::from(body)).into_response();
    let h = resp.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(content_type),
    );
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert("x-amzn-requestid", v);
    }
    resp
}

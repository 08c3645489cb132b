//! Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`), which kubectl and
//! every client-go program send for built-in kinds: request bodies are read into the JSON the
//! core takes, and answers, lists, watch frames and `Status` errors are written in protobuf
//! when the `Accept` header asks for it first, as kube-apiserver negotiates it.
//!
//! - [`envelope`]: the `k8s\0` + `runtime.Unknown` envelope and watch framing;
//! - [`messages`]: the message of a kind, from k8s-rs-pb's file descriptors;
//! - [`mapping`]: the one descriptor-driven mapping between messages and JSON;
//! - [`negotiate`]: `Accept` negotiation with kube's endpoint restrictions.
//!
//! Custom resources have no protobuf form: their objects are served as JSON (406 when the
//! client accepts only protobuf) and a protobuf body for one is refused with the real server's
//! message, while their `Status` errors and `DeleteOptions` bodies still speak protobuf.

mod envelope;
mod mapping;
mod messages;
pub mod negotiate;

use protobuf::MessageDyn;
use serde_json::{Map, Value};

use crate::api::{Cluster, Request, Response};
use crate::status::ApiError;
use negotiate::{Chosen, Endpoint, Format};

/// The protobuf media type.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// Whether a `Content-Type` is protobuf (parameters ignored).
pub fn is_protobuf(content_type: &str) -> bool {
    content_type.split(';').next().unwrap_or_default().trim() == MEDIA_TYPE
}

/// Why a protobuf body could not be read.
#[derive(Debug)]
enum DecodeError {
    /// The envelope itself: no kind is known yet.
    Envelope(String),
    /// The object of `kind` in `api_version`.
    Object {
        api_version: String,
        kind: String,
        message: String,
    },
}

/// The JSON object of an enveloped protobuf object (with `apiVersion` and `kind` from the
/// envelope).
///
/// # Errors
/// The envelope or the message cannot be read, or the kind has no message.
pub fn decode_object(data: &[u8]) -> Result<Value, String> {
    decode(data, None).map_err(|e| match e {
        DecodeError::Envelope(message) | DecodeError::Object { message, .. } => message,
    })
}

/// Reads an enveloped object; `default` (`apiVersion`, `kind`) fills what the envelope leaves
/// empty, as apimachinery's `copyKindDefaults` does.
fn decode(data: &[u8], default: Option<(&str, &str)>) -> Result<Value, DecodeError> {
    let enveloped = envelope::open(data).map_err(DecodeError::Envelope)?;
    let (default_version, default_kind) = default.unwrap_or_default();
    let api_version = match enveloped.api_version.as_str() {
        "" => default_version.to_string(),
        given => given.to_string(),
    };
    let kind = match enveloped.kind.as_str() {
        "" => default_kind.to_string(),
        given => given.to_string(),
    };
    let fail = |message: String| DecodeError::Object {
        api_version: api_version.clone(),
        kind: kind.clone(),
        message,
    };
    if kind.is_empty() {
        return Err(DecodeError::Envelope(format!(
            "Object 'Kind' is missing in '{}'",
            summarize(data)
        )));
    }
    let descriptor = messages::message_for(&api_version, &kind).ok_or_else(|| {
        fail(format!(
            "no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        ))
    })?;
    let message = descriptor
        .parse_from_bytes(&enveloped.raw)
        .map_err(|e| fail(e.to_string()))?;
    let fields = mapping::to_json(&*message)
        .map_err(fail)?
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut object = Map::new();
    object.insert("apiVersion".into(), Value::String(api_version.clone()));
    object.insert("kind".into(), Value::String(kind.clone()));
    if let Value::Object(fields) = fields {
        object.extend(fields);
    }
    Ok(Value::Object(object))
}

/// The enveloped protobuf encoding of a JSON object with `apiVersion` and `kind`.
///
/// # Errors
/// The kind has no protobuf message (a custom resource: apimachinery's `errNotMarshalable`
/// message), or the object does not fit its message.
pub fn encode(value: &Value) -> Result<Vec<u8>, String> {
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let kind = value["kind"].as_str().unwrap_or_default();
    let Some(descriptor) = messages::message_for(api_version, kind) else {
        let go_type = if kind.ends_with("List") && value.get("items").is_some() {
            "*unstructured.UnstructuredList"
        } else {
            "*unstructured.Unstructured"
        };
        return Err(format!(
            "object {go_type} does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message"
        ));
    };
    let message: Box<dyn MessageDyn> = mapping::from_json(value, &descriptor)?;
    let raw = message.write_to_bytes_dyn().map_err(|e| e.to_string())?;
    Ok(envelope::seal(api_version, kind, raw))
}

/// A watch event (`{"type", "object"}`) as one length-prefixed protobuf frame.
///
/// # Errors
/// The event's object cannot be encoded (see [`encode`]).
pub fn watch_frame(event: &Value) -> Result<Vec<u8>, String> {
    let object = encode(&event["object"])?;
    Ok(envelope::watch_frame(
        event["type"].as_str().unwrap_or_default(),
        object,
    ))
}

/// `summarizeData`: the first 30 bytes of a body, as text when it is a JSON object, else hex.
fn summarize(data: &[u8]) -> String {
    const MAX: usize = 30;
    let head = &data[..data.len().min(MAX)];
    let more = if data.len() > MAX { " ..." } else { "" };
    match data.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(head)),
        Some(_) => {
            let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

/// What a request path serves, as far as media types go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Served {
    /// `/api` or `/apis`: aggregated discovery when asked for, else legacy.
    DiscoveryRoot,
    /// `/api/v1`, `/apis/{group}`, `/apis/{group}/{version}`: legacy discovery.
    Discovery,
    /// Objects of a resource (or its `status`/`scale` subresource).
    Resource {
        /// `apiVersion` of the objects (`apps/v1`, `v1`).
        api_version: String,
        /// The plural resource name.
        plural: String,
        /// The built-in kind served there, `None` for a custom resource.
        builtin: Option<&'static str>,
    },
    /// `/version`, `/openapi/…` and the rest: JSON only.
    Other,
}

fn served(path: &str) -> Served {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api" | "apis"] => return Served::DiscoveryRoot,
        ["api", _] | ["apis", _] | ["apis", _, _] => return Served::Discovery,
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Served::Other,
    };
    let rest = match rest {
        ["namespaces", _, resource, tail @ ..] if !matches!(*resource, "status" | "finalize") => {
            [&[*resource][..], tail].concat()
        }
        _ => rest.to_vec(),
    };
    let plural = rest[0].to_string();
    let api_version = match group {
        "" => version.to_string(),
        group => format!("{group}/{version}"),
    };
    let builtin = if rest.get(2) == Some(&"scale") {
        Some(crate::kinds::SCALE.kind)
    } else {
        crate::kinds::BUILTINS
            .iter()
            .find(|b| b.group == group && b.version == version && b.plural == plural)
            .map(|b| b.kind)
    };
    Served::Resource {
        api_version,
        plural,
        builtin,
    }
}

/// The negotiated media types of one request's answers (by default JSON for all).
#[derive(Debug, Clone, Default)]
pub struct Negotiated {
    /// For its objects and documents; `None` for paths not negotiated (`/version`, OpenAPI).
    chosen: Option<Chosen>,
    /// The JSON the client also accepts, when protobuf was chosen: what an object with a
    /// field krt-sim's protobuf messages lack ([`mapping::NO_FIELD`]) is written in instead.
    fallback: Option<Chosen>,
    /// For its `Status` errors.
    errors: Format,
}

impl Negotiated {
    /// The media type watch events are written in.
    pub fn watch_format(&self) -> Format {
        self.chosen.as_ref().map_or(Format::Json, |c| c.format)
    }
}

/// One answer ready to send: code, media type and body bytes.
pub struct Rendered {
    /// HTTP status code.
    pub code: u16,
    /// `Content-Type`.
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

/// Prepares an HTTP `request` for the core: negotiates the answer's media type from `Accept`
/// (leaving the core the winning clause as JSON) and reads a protobuf body into JSON.
///
/// # Errors
/// The answer to send instead: 406 when nothing acceptable is offered, 400 for a protobuf
/// body that cannot be read or is for a custom resource (in kube-apiserver's words).
pub fn prepare(
    cluster: &Cluster,
    request: &mut Request,
    watching: bool,
) -> Result<Negotiated, Rendered> {
    let errors = negotiate::negotiate(&request.accept, Endpoint::Plain, false)
        .map_or(Format::Json, |c| c.format);
    let served = served(&request.path);
    let endpoint = match &served {
        Served::DiscoveryRoot => Some(Endpoint::AggregatedDiscovery),
        Served::Discovery => Some(Endpoint::Plain),
        Served::Resource {
            builtin: Some(kind),
            api_version,
            ..
        } if messages::message_for(api_version, kind).is_some() => Some(Endpoint::Builtin),
        // A custom resource, or a kind newer than krt-sim's protobuf messages: JSON only.
        Served::Resource { .. } => Some(Endpoint::Custom),
        Served::Other => None,
    };
    let mut negotiated = Negotiated {
        chosen: None,
        fallback: None,
        errors,
    };
    let request_accept = request.accept.clone();
    if let Some(endpoint) = endpoint {
        let mut chosen = negotiate::negotiate(&request.accept, endpoint, watching);
        if chosen.is_none() && endpoint == Endpoint::AggregatedDiscovery {
            chosen = negotiate::negotiate(&request.accept, Endpoint::Plain, false);
        }
        let Some(chosen) = chosen else {
            let error = ApiError::new(
                406,
                "NotAcceptable",
                negotiate::not_acceptable_message(watching),
            );
            return Err(render(&negotiated, &error.into()));
        };
        request.accept = chosen.json_accept();
        if chosen.format == Format::Protobuf {
            negotiated.fallback = negotiate::negotiate(&request_accept, Endpoint::Custom, watching)
                .filter(|json| json.convert == chosen.convert);
        }
        negotiated.chosen = Some(chosen);
    }
    if is_protobuf(&request.content_type) && !request.body.is_empty() {
        let body =
            read_body(cluster, request, &served).map_err(|e| render(&negotiated, &e.into()))?;
        if let Some(body) = body {
            request.body = serde_json::to_vec(&body).unwrap_or_default();
            request.content_type = "application/json".into();
        }
    }
    Ok(negotiated)
}

/// The JSON of a protobuf request body, `None` where the core answers it as it is (a patch:
/// 415, patches being JSON or YAML).
fn read_body(
    cluster: &Cluster,
    request: &Request,
    served: &Served,
) -> Result<Option<Value>, ApiError> {
    if request.method == "DELETE" {
        let options = decode(&request.body, Some(("meta.k8s.io/v1", "DeleteOptions"))).map_err(
            |e| match e {
                DecodeError::Envelope(message) | DecodeError::Object { message, .. } => {
                    ApiError::bad_request(message)
                }
            },
        )?;
        if options["kind"] != "DeleteOptions" {
            return Err(ApiError::new(
                500,
                "InternalError",
                "Internal error occurred: decoded object cannot be converted to DeleteOptions",
            ));
        }
        return Ok(Some(options));
    }
    if !matches!(request.method.as_str(), "POST" | "PUT") {
        return Ok(None);
    }
    let Served::Resource {
        api_version,
        plural,
        builtin,
    } = served
    else {
        return Ok(None);
    };
    let target = match builtin {
        Some(kind) => (*kind).to_string(),
        None => custom_kind(cluster, api_version, plural).ok_or_else(|| {
            ApiError::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )
        })?,
    };
    let decoded = if builtin.is_some() {
        decode(&request.body, Some((api_version, &target)))
    } else {
        // A custom resource decodes into an Unstructured, which protobuf cannot fill.
        envelope::open(&request.body)
            .map_err(DecodeError::Envelope)
            .and_then(|enveloped| {
                Err(DecodeError::Object {
                    api_version: or(enveloped.api_version, api_version),
                    kind: or(enveloped.kind, &target),
                    message: "Object 'Kind' is missing in 'object has no kind field '".into(),
                })
            })
    };
    decoded.map(Some).map_err(|e| match e {
        DecodeError::Envelope(message) => ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {target}): {message} ({})",
            summarize(&request.body)
        )),
        DecodeError::Object {
            api_version,
            kind,
            message,
        } => {
            let version = api_version.rsplit('/').next().unwrap_or_default();
            ApiError::bad_request(format!(
                "{kind} in version {version:?} cannot be handled as a {target}: {message}"
            ))
        }
    })
}

fn or(given: String, default: &str) -> String {
    if given.is_empty() {
        default.to_string()
    } else {
        given
    }
}

/// The kind of the custom resource `plural` in `api_version`, from its discovery document.
fn custom_kind(cluster: &Cluster, api_version: &str, plural: &str) -> Option<String> {
    let resources = cluster.handle(&Request::get(&format!("/apis/{api_version}")));
    resources.body["resources"]
        .as_array()?
        .iter()
        .find(|r| r["name"] == plural)
        .and_then(|r| r["kind"].as_str())
        .map(str::to_string)
}

/// The core's JSON answer in the negotiated media type: protobuf for a built-in kind (or a
/// `Status`) when asked for, JSON otherwise (and for YAML, which krt-sim does not write).
pub fn render(negotiated: &Negotiated, response: &Response) -> Rendered {
    let json = || Rendered {
        code: response.code,
        content_type: response.content_type.clone(),
        body: serde_json::to_vec(&response.body).unwrap_or_default(),
    };
    let error = response.code >= 400;
    let protobuf_type = match &negotiated.chosen {
        _ if error && negotiated.errors == Format::Protobuf => MEDIA_TYPE.to_string(),
        Some(chosen) if !error && chosen.format == Format::Protobuf => chosen.content_type(),
        _ => return json(),
    };
    match encode(&response.body) {
        Ok(body) => Rendered {
            code: response.code,
            content_type: protobuf_type,
            body,
        },
        Err(message) => {
            if let Some(json) = negotiated
                .fallback
                .as_ref()
                .filter(|_| !error && message.ends_with(mapping::NO_FIELD))
            {
                return Rendered {
                    code: response.code,
                    content_type: json.content_type(),
                    body: serde_json::to_vec(&response.body).unwrap_or_default(),
                };
            }
            let code = if error { 500 } else { 406 };
            let reason = if error {
                "InternalError"
            } else {
                "NotAcceptable"
            };
            let status = ApiError::new(code, reason, message).to_status();
            let body = serde_json::to_value(status).unwrap_or_default();
            Rendered {
                code,
                content_type: MEDIA_TYPE.into(),
                body: encode(&body).unwrap_or_default(),
            }
        }
    }
}

#[cfg(test)]
mod tests;

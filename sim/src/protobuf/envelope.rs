//! apimachinery's protobuf framing: an object is the magic `k8s\0` and a `runtime.Unknown`
//! holding its `apiVersion`/`kind` and the encoded message; a watch stream is a sequence of
//! 4-byte big-endian length-prefixed `metav1.WatchEvent`s (without the magic), each holding
//! its object's enveloped encoding.

use k8s_rs_pb::apimachinery::pkg::apis::meta::v1::WatchEvent;
use k8s_rs_pb::apimachinery::pkg::runtime::{RawExtension, TypeMeta, Unknown};
use protobuf::{Message, MessageField};

/// The prefix of every enveloped object.
pub const MAGIC: [u8; 4] = *b"k8s\0";

/// `apiVersion`, `kind` and the message bytes of an enveloped object.
pub struct Enveloped {
    /// The envelope's `typeMeta.apiVersion` (may be empty).
    pub api_version: String,
    /// The envelope's `typeMeta.kind` (may be empty).
    pub kind: String,
    /// The encoded message.
    pub raw: Vec<u8>,
}

/// Opens an envelope.
///
/// # Errors
/// apimachinery's messages for an empty body, a missing magic, and an unreadable `Unknown`.
pub fn open(data: &[u8]) -> Result<Enveloped, String> {
    if data.is_empty() {
        return Err("empty data".into());
    }
    let Some(rest) = data.strip_prefix(&MAGIC) else {
        // Go's `%v` of a byte slice: `[107 56 115 0]`.
        let prefix: Vec<String> = MAGIC.iter().map(u8::to_string).collect();
        return Err(format!(
            "provided data does not appear to be a protobuf message, expected prefix [{}]",
            prefix.join(" ")
        ));
    };
    if rest.is_empty() {
        return Err("empty body".into());
    }
    let unknown = Unknown::parse_from_bytes(rest).map_err(|e| e.to_string())?;
    Ok(Enveloped {
        api_version: unknown.typeMeta.apiVersion().to_string(),
        kind: unknown.typeMeta.kind().to_string(),
        raw: unknown.raw().to_vec(),
    })
}

/// Seals `raw`, a message of `kind` in `api_version`, in an envelope.
pub fn seal(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let mut type_meta = TypeMeta::new();
    type_meta.set_apiVersion(api_version.to_string());
    type_meta.set_kind(kind.to_string());
    let mut unknown = Unknown::new();
    unknown.typeMeta = MessageField::some(type_meta);
    unknown.set_raw(raw);
    unknown.set_contentEncoding(String::new());
    unknown.set_contentType(String::new());
    let mut out = MAGIC.to_vec();
    out.extend(unknown.write_to_bytes().unwrap_or_default());
    out
}

/// One watch stream frame: an event of `event_type` whose object's enveloped encoding is
/// `object`.
pub fn watch_frame(event_type: &str, object: Vec<u8>) -> Vec<u8> {
    let mut raw = RawExtension::new();
    raw.set_raw(object);
    let mut event = WatchEvent::new();
    event.set_type(event_type.to_string());
    event.object = MessageField::some(raw);
    let body = event.write_to_bytes().unwrap_or_default();
    let mut frame = u32::try_from(body.len())
        .unwrap_or(u32::MAX)
        .to_be_bytes()
        .to_vec();
    frame.extend(body);
    frame
}

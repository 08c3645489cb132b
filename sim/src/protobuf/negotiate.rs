//! Content negotiation as kube-apiserver's `NegotiateMediaTypeOptions` does it: the `Accept`
//! clauses by quality (then specificity), each tried against the served media types in the
//! order JSON, YAML, protobuf, the first one the endpoint allows winning.

/// A served media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `application/json`.
    #[default]
    Json,
    /// `application/yaml` (krt-sim answers it with JSON).
    Yaml,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

impl Format {
    const ALL: [Self; 3] = [Self::Json, Self::Yaml, Self::Protobuf];

    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Yaml => "application/yaml",
            Self::Protobuf => super::MEDIA_TYPE,
        }
    }

    fn has_stream(self) -> bool {
        self != Self::Yaml
    }
}

/// The media types an endpoint serves beyond its plain objects (kube's
/// `EndpointRestrictions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// A built-in kind's: every format, conversions to `Table` in JSON or YAML and to
    /// `PartialObjectMetadata` in any.
    Builtin,
    /// A custom resource's: its objects in JSON or YAML only (protobuf is not offered), the
    /// same conversions as a built-in's.
    Custom,
    /// `/api` and `/apis` asked for aggregated discovery: only the conversion to
    /// `apidiscovery.k8s.io` `APIGroupDiscoveryList` (v2 or v2beta1).
    AggregatedDiscovery,
    /// Anything else (errors, legacy discovery): no conversion.
    Plain,
}

/// The `as`/`g`/`v` conversion a clause asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Convert {
    /// `g`.
    pub group: String,
    /// `v`.
    pub version: String,
    /// `as`.
    pub kind: String,
}

/// The negotiated answer: its media type and the conversion asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The media type.
    pub format: Format,
    /// The conversion, if the clause had `as`, `g` or `v`.
    pub convert: Option<Convert>,
}

impl Chosen {
    /// The clause as JSON, for the core, which answers in JSON and reads `as=Table` and the
    /// aggregated discovery profile off its `Accept`.
    pub fn json_accept(&self) -> String {
        match &self.convert {
            None => "application/json".into(),
            Some(c) => format!(
                "application/json;g={};v={};as={}",
                c.group, c.version, c.kind
            ),
        }
    }

    /// The answer's `Content-Type`: the media type, with the conversion's profile for
    /// aggregated discovery (as kube-apiserver writes it).
    pub fn content_type(&self) -> String {
        match &self.convert {
            Some(c) if c.kind == "APIGroupDiscoveryList" => format!(
                "{};g={};v={};as={}",
                self.format.media_type(),
                c.group,
                c.version,
                c.kind
            ),
            _ => self.format.media_type().into(),
        }
    }
}

/// `only the following media types are accepted: …`, kube-apiserver's 406 message.
pub fn not_acceptable_message(stream: bool) -> String {
    let types: Vec<String> = Format::ALL
        .iter()
        .filter(|f| !stream || f.has_stream())
        .map(|f| {
            if stream {
                format!("{};stream=watch", f.media_type())
            } else {
                f.media_type().to_string()
            }
        })
        .collect();
    format!(
        "only the following media types are accepted: {}",
        types.join(", ")
    )
}

struct Clause<'a> {
    kind: &'a str,
    subtype: &'a str,
    quality: f64,
    params: Vec<(&'a str, &'a str)>,
}

fn clauses(accept: &str) -> Vec<Clause<'_>> {
    let mut clauses: Vec<Clause> = accept
        .split(',')
        .filter_map(|part| {
            let mut pieces = part.split(';').map(str::trim);
            let (kind, subtype) = pieces.next()?.split_once('/')?;
            let mut quality = 1.0;
            let mut params = Vec::new();
            for piece in pieces {
                let (key, value) = piece.split_once('=').unwrap_or((piece, ""));
                if key == "q" {
                    quality = value.parse().unwrap_or(0.0);
                } else {
                    params.push((key, value));
                }
            }
            Some(Clause {
                kind,
                subtype,
                quality,
                params,
            })
        })
        .collect();
    clauses.sort_by(|a, b| {
        b.quality
            .total_cmp(&a.quality)
            .then((a.kind == "*").cmp(&(b.kind == "*")))
            .then((a.subtype == "*").cmp(&(b.subtype == "*")))
    });
    clauses
}

fn allows(endpoint: Endpoint, format: Format, convert: Option<&Convert>) -> bool {
    let text = format != Format::Protobuf;
    let meta =
        |c: &Convert| c.group == "meta.k8s.io" && (c.version == "v1" || c.version == "v1beta1");
    match (endpoint, convert) {
        (Endpoint::Builtin | Endpoint::Plain, None) => true,
        (Endpoint::Custom, None) => text,
        (Endpoint::Builtin | Endpoint::Custom, Some(c)) if meta(c) => match c.kind.as_str() {
            "Table" => text,
            "PartialObjectMetadata" | "PartialObjectMetadataList" => true,
            _ => false,
        },
        (Endpoint::AggregatedDiscovery, Some(c)) => {
            c.group == "apidiscovery.k8s.io"
                && (c.version == "v2" || c.version == "v2beta1")
                && c.kind == "APIGroupDiscoveryList"
        }
        _ => false,
    }
}

/// The media type and conversion of the answer to `accept` on `endpoint` (`stream` for a
/// watch), or `None` when nothing offered is acceptable (kube-apiserver's 406).
pub fn negotiate(accept: &str, endpoint: Endpoint, stream: bool) -> Option<Chosen> {
    let chosen = if accept.trim().is_empty() {
        Some(Chosen {
            format: Format::Json,
            convert: None,
        })
    } else {
        clauses(accept).iter().find_map(|clause| {
            Format::ALL.into_iter().find_map(|format| {
                let (kind, subtype) = format.media_type().split_once('/')?;
                let matches = (clause.kind == kind
                    && (clause.subtype == subtype || clause.subtype == "*"))
                    || (clause.kind == "*" && clause.subtype == "*");
                if !matches {
                    return None;
                }
                accepts(clause, format, endpoint)
            })
        })
    };
    chosen.filter(|c| !stream || c.format.has_stream())
}

fn accepts(clause: &Clause, format: Format, endpoint: Endpoint) -> Option<Chosen> {
    let mut convert: Option<Convert> = None;
    for &(key, value) in &clause.params {
        match key {
            "as" => convert.get_or_insert_with(Convert::default).kind = value.into(),
            "g" => convert.get_or_insert_with(Convert::default).group = value.into(),
            "v" => convert.get_or_insert_with(Convert::default).version = value.into(),
            "stream" if !value.is_empty() && (!format.has_stream() || value != "watch") => {
                return None;
            }
            _ => {}
        }
    }
    allows(endpoint, format, convert.as_ref()).then_some(Chosen { format, convert })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT_GO: &str = "application/vnd.kubernetes.protobuf,application/json";
    const KUBECTL_GET: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

    fn format(accept: &str, endpoint: Endpoint) -> Option<Format> {
        negotiate(accept, endpoint, false).map(|c| c.format)
    }

    #[test]
    fn client_go_gets_protobuf_for_builtins_and_json_for_custom_resources() {
        assert_eq!(format(CLIENT_GO, Endpoint::Builtin), Some(Format::Protobuf));
        assert_eq!(format(CLIENT_GO, Endpoint::Custom), Some(Format::Json));
        assert_eq!(format(CLIENT_GO, Endpoint::Plain), Some(Format::Protobuf));
        assert_eq!(format(super::super::MEDIA_TYPE, Endpoint::Custom), None);
        assert_eq!(format("", Endpoint::Builtin), Some(Format::Json));
        assert_eq!(format("*/*", Endpoint::Builtin), Some(Format::Json));
        assert_eq!(format("text/html", Endpoint::Builtin), None);
    }

    #[test]
    fn quality_orders_the_clauses() {
        let accept = "application/json;q=0.5, application/vnd.kubernetes.protobuf";
        assert_eq!(format(accept, Endpoint::Builtin), Some(Format::Protobuf));
        let accept = "application/vnd.kubernetes.protobuf;q=0.1, application/json";
        assert_eq!(format(accept, Endpoint::Builtin), Some(Format::Json));
    }

    #[test]
    fn tables_are_json_only_and_conversions_are_kept() {
        let chosen = negotiate(KUBECTL_GET, Endpoint::Builtin, false).unwrap();
        assert_eq!(chosen.format, Format::Json);
        assert_eq!(
            chosen.json_accept(),
            "application/json;g=meta.k8s.io;v=v1;as=Table"
        );
        let accept =
            "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json";
        let chosen = negotiate(accept, Endpoint::Builtin, false).unwrap();
        assert_eq!((chosen.format, chosen.convert), (Format::Json, None));
        // Errors and legacy discovery take no conversion.
        assert_eq!(format(KUBECTL_GET, Endpoint::Plain), Some(Format::Json));
    }

    #[test]
    fn aggregated_discovery_is_served_in_protobuf_when_asked_first() {
        let accept = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
        let chosen = negotiate(accept, Endpoint::AggregatedDiscovery, false).unwrap();
        assert_eq!(chosen.format, Format::Protobuf);
        assert_eq!(
            chosen.content_type(),
            "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        );
        assert_eq!(
            negotiate(CLIENT_GO, Endpoint::AggregatedDiscovery, false),
            None
        );
    }

    #[test]
    fn watches_need_a_stream_format() {
        let chosen = negotiate(CLIENT_GO, Endpoint::Builtin, true).unwrap();
        assert_eq!(chosen.format, Format::Protobuf);
        assert_eq!(negotiate("application/yaml", Endpoint::Builtin, true), None);
        assert_eq!(
            not_acceptable_message(true),
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
        );
        assert_eq!(
            not_acceptable_message(false),
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }
}

//! What decoding an object into kube-apiserver's Go types and encoding it back does to it:
//! resource quantities come back canonical (`1024Mi` → `1Gi`, see [`crate::quantity`]), a
//! Secret's `stringData` is folded into base64 `data`, and a malformed quantity, which cannot be
//! decoded at all, is a 400.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use crate::quantity::{self, QuantityError};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// An error as the decoder reports it: `<Kind> in version "<v>" cannot be handled as a <Kind>: …`.
fn undecodable(rt: &ResourceType, why: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: {why}",
        kind = rt.kind,
        version = rt.version,
    ))
}

fn canonical_quantity(rt: &ResourceType, value: &mut Value, milli: bool) -> Result<(), ApiError> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err(undecodable(rt, QuantityError::Format)),
    };
    let canonical = quantity::canonical(text.trim(), milli).map_err(|e| undecodable(rt, e))?;
    *value = Value::String(canonical);
    Ok(())
}

/// Puts every quantity of `object` in canonical form, wherever kube-apiserver's schema of the
/// kind places one; the values of a `ResourceList` are rounded up to milli-units as well
/// (`SetDefaults_ResourceList`).
fn canonical_quantities(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    crate::ssa::each_quantity(&rt.api_version(), &rt.kind, object, &mut |value, list| {
        canonical_quantity(rt, value, list)
    })
}

/// Folds `stringData` into `data` (its keys win), as the conversion of a v1 Secret does (`data`
/// that is not base64 was refused by decoding).
fn secret(object: &mut Value) {
    let Some(Value::Object(string_data)) =
        object.as_object_mut().and_then(|o| o.remove("stringData"))
    else {
        return;
    };
    if !object["data"].is_object() {
        object["data"] = Value::Object(Map::new());
    }
    for (key, value) in string_data {
        let text = value.as_str().unwrap_or_default();
        object["data"][key] = Value::String(STANDARD.encode(text));
    }
}

/// Puts `object` of type `rt` in the form kube-apiserver stores it.
///
/// # Errors
/// 400 BadRequest for what the API server cannot decode.
pub fn normalize(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    if rt.custom {
        return Ok(());
    }
    if rt.kind == "Secret" && rt.group.is_empty() {
        secret(object);
    }
    canonical_quantities(rt, object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtins;
    use serde_json::json;

    fn rt(kind: &str) -> ResourceType {
        builtins().into_iter().find(|t| t.kind == kind).unwrap()
    }

    #[test]
    fn quantities_in_templates_and_claims_are_stored_canonical() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "a",
            "resources": {"limits": {"memory": "1024Mi", "cpu": "1000m"}, "requests": {"cpu": 0.5}}}],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "2048Mi"}}]}}}});
        normalize(&rt("Deployment"), &mut d).unwrap();
        let c = &d["spec"]["template"]["spec"]["containers"][0]["resources"];
        assert_eq!(c["limits"], json!({"memory": "1Gi", "cpu": "1"}));
        assert_eq!(c["requests"]["cpu"], "500m");
        assert_eq!(
            d["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
            "2Gi"
        );
        let mut pvc = json!({"spec": {"resources": {"requests": {"storage": "1000Mi"}}}});
        normalize(&rt("PersistentVolumeClaim"), &mut pvc).unwrap();
        assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1000Mi");
        let mut bad = json!({"spec": {"resources": {"requests": {"storage": "lots"}}}});
        let err = normalize(&rt("PersistentVolumeClaim"), &mut bad).unwrap_err();
        assert_eq!(err.code, 400);
        assert!(err.message.starts_with("PersistentVolumeClaim in version \"v1\" cannot be handled as a PersistentVolumeClaim: quantities must match"), "{}", err.message);
    }

    #[test]
    fn secrets_fold_string_data() {
        let mut s =
            json!({"data": {"a": "YQ==", "b": "Yg=="}, "stringData": {"b": "bee", "c": "sea"}});
        normalize(&rt("Secret"), &mut s).unwrap();
        assert_eq!(s, json!({"data": {"a": "YQ==", "b": "YmVl", "c": "c2Vh"}}));
    }
}

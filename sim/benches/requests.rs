//! Requests per second of the simulator over HTTP: `cargo bench -p sim --bench requests`.
//!
//! 16 clients on keep-alive connections run one operation at a time over their own ConfigMaps:
//! create, get, server-side apply with a changed value, and the same apply again (unchanged).
//! Prints requests/s and mean latency per operation, then the throughput of creates into an
//! empty store and into one already holding 5,000 objects.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

const CLIENTS: usize = 16;
const PER_CLIENT: usize = 500;
const PRELOADED: usize = 5_000;
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The request a client sends for its `i`th object, and the status it expects back.
type MakeRequest = dyn Fn(&str, usize, usize) -> (Request<Full<Bytes>>, u16) + Send + Sync;

fn create(address: &str, client: usize, i: usize) -> (Request<Full<Bytes>>, u16) {
    let body =
        format!(r#"{{"metadata": {{"name": "bench-{client}-{i}"}}, "data": {{"i": "{i}"}}}}"#);
    let request = Request::post(CONFIGMAPS)
        .header("host", address)
        .header("authorization", BEARER)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("request");
    (request, 201)
}

fn get(address: &str, client: usize, i: usize) -> (Request<Full<Bytes>>, u16) {
    let request = Request::get(format!("{CONFIGMAPS}/bench-{client}-{i}"))
        .header("host", address)
        .header("authorization", BEARER)
        .body(Full::new(Bytes::new()))
        .expect("request");
    (request, 200)
}

/// A server-side apply (forced, manager `bench`) setting the value to `changed-<i>`.
fn apply(address: &str, client: usize, i: usize) -> (Request<Full<Bytes>>, u16) {
    let name = format!("bench-{client}-{i}");
    let body = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  i: changed-{i}\n"
    );
    let request = Request::patch(format!("{CONFIGMAPS}/{name}?fieldManager=bench&force=true"))
        .header("host", address)
        .header("authorization", BEARER)
        .header("content-type", "application/apply-patch+yaml")
        .body(Full::new(Bytes::from(body)))
        .expect("request");
    (request, 200)
}

/// One client sending its `PER_CLIENT` requests on one connection; returns the time spent.
async fn client(address: String, id: usize, make: Arc<MakeRequest>) -> Result<Duration, Error> {
    let stream = tokio::net::TcpStream::connect(&address).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut spent = Duration::ZERO;
    for i in 0..PER_CLIENT {
        let (request, expected) = make(&address, id, i);
        let started = Instant::now();
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        assert_eq!(status, expected, "{}", String::from_utf8_lossy(&body));
        spent += started.elapsed();
    }
    Ok(spent)
}

/// Requests/s and mean latency (ms) of `CLIENTS` clients running `make` concurrently.
async fn measure(address: &str, make: Arc<MakeRequest>) -> (f64, f64) {
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|id| tokio::spawn(client(address.to_string(), id, make.clone())))
        .collect();
    let mut spent = Duration::ZERO;
    for c in clients {
        spent += c.await.expect("client task").expect("client requests");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let requests = (CLIENTS * PER_CLIENT) as f64;
    (requests / elapsed, spent.as_secs_f64() * 1000.0 / requests)
}

fn address_of(sim: &krt_sim::Sim) -> String {
    sim.url().trim_start_matches("http://").to_string()
}

/// The admin token the benchmark's simulators accept.
const TOKEN: &str = "bench";
/// `Authorization` with [`TOKEN`].
const BEARER: &str = "Bearer bench";

/// A simulator already holding `count` ConfigMaps (created in-process).
async fn simulator_with(count: usize) -> krt_sim::Sim {
    let config = krt_sim::SimConfig {
        token: Some(TOKEN.into()),
        ..krt_sim::SimConfig::default()
    };
    let sim = krt_sim::Sim::start_with(config)
        .await
        .expect("simulator starts");
    for i in 0..count {
        let body =
            format!(r#"{{"metadata": {{"name": "preloaded-{i}"}}, "data": {{"i": "{i}"}}}}"#);
        let created = sim
            .cluster()
            .handle(&krt_sim::api::Request::post(CONFIGMAPS, body.into_bytes()));
        assert_eq!(created.code, 201);
    }
    sim
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        println!("krt-sim, {CLIENTS} keep-alive clients x {PER_CLIENT} requests per operation");
        println!(
            "{:<26} {:>12} {:>16}",
            "operation", "requests/s", "mean latency ms"
        );
        let sim = simulator_with(0).await;
        let address = address_of(&sim);
        let operations: [(&str, Arc<MakeRequest>); 4] = [
            ("create", Arc::new(create)),
            ("get", Arc::new(get)),
            ("apply (changed value)", Arc::new(apply)),
            ("apply (unchanged)", Arc::new(apply)),
        ];
        for (name, make) in operations {
            let (rate, latency) = measure(&address, make).await;
            println!("{name:<26} {rate:>12.0} {latency:>16.2}");
        }
        sim.shutdown().await;

        let mut rates = Vec::new();
        for count in [0, PRELOADED] {
            let sim = simulator_with(count).await;
            rates.push(measure(&address_of(&sim), Arc::new(create)).await.0);
            sim.shutdown().await;
        }
        println!(
            "creates/s into a store holding 0 objects: {:.0}, {PRELOADED} objects: {:.0}",
            rates[0], rates[1]
        );
    });
}

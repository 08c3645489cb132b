//! Requests per second of the simulator over HTTP: `cargo bench -p sim --bench requests`.
//!
//! 16 clients on keep-alive connections alternate creating a ConfigMap and reading it back;
//! prints the throughput of creates, gets and both together.

use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

const CLIENTS: usize = 16;
const PER_CLIENT: usize = 500;

async fn client(
    address: String,
    id: usize,
) -> Result<(Duration, Duration), Box<dyn std::error::Error + Send + Sync>> {
    let stream = tokio::net::TcpStream::connect(&address).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let (mut creating, mut reading) = (Duration::ZERO, Duration::ZERO);
    for i in 0..PER_CLIENT {
        let name = format!("bench-{id}-{i}");
        let body = format!(r#"{{"metadata": {{"name": "{name}"}}, "data": {{"i": "{i}"}}}}"#);
        let started = Instant::now();
        let create = Request::post("/api/v1/namespaces/default/configmaps")
            .header("host", &address)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))?;
        let response = sender.send_request(create).await?;
        assert_eq!(response.status().as_u16(), 201);
        response.into_body().collect().await?;
        creating += started.elapsed();

        let started = Instant::now();
        let get = Request::get(format!("/api/v1/namespaces/default/configmaps/{name}"))
            .header("host", &address)
            .body(Full::new(Bytes::new()))?;
        let response = sender.send_request(get).await?;
        assert_eq!(response.status().as_u16(), 200);
        response.into_body().collect().await?;
        reading += started.elapsed();
    }
    Ok((creating, reading))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let sim = sim::Sim::start().await.expect("simulator starts");
        let address = sim.url().trim_start_matches("http://").to_string();
        let started = Instant::now();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|id| tokio::spawn(client(address.clone(), id)))
            .collect();
        let (mut creating, mut reading) = (Duration::ZERO, Duration::ZERO);
        for c in clients {
            let (c, r) = c.await.expect("client task").expect("client requests");
            creating += c;
            reading += r;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let each = (CLIENTS * PER_CLIENT) as f64;
        println!(
            "krt-sim: {:.0} requests/s ({} clients, {} requests in {elapsed:.2}s); \
             mean latency create {:.2} ms, get {:.2} ms",
            2.0 * each / elapsed,
            CLIENTS,
            2 * CLIENTS * PER_CLIENT,
            creating.as_secs_f64() * 1000.0 / each,
            reading.as_secs_f64() * 1000.0 / each,
        );
        sim.shutdown().await;
    });
}

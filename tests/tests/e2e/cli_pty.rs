//! `krt apply` on a pseudo-terminal: the confirmation prompt, the live
//! progress display's final screen, and `NO_COLOR`.

use crate::support::{TestCluster, cache_dir, krt_bin, temp_dir, workspace};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

const ROWS: u16 = 40;
const COLS: u16 = 120;

/// Runs krt on a pseudo-terminal, typing `typed`; returns its exit code and
/// everything it wrote to the terminal.
async fn on_terminal(
    dir: &Path,
    args: Vec<String>,
    typed: &'static str,
    envs: &[(&str, &str)],
) -> (u32, Vec<u8>) {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(krt_bin());
    cmd.args(&args);
    cmd.cwd(dir);
    cmd.env("XDG_CACHE_HOME", cache_dir());
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("KUBECONFIG");
    cmd.env_remove("NO_COLOR");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let (chunks, received) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // The read fails (EIO) once the child has exited and the terminal closed.
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || chunks.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // Type the answer once the prompt is on the screen.
    let mut output = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !output.windows(5).any(|w| w == b"[y/N]") {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match received.recv_timeout(left) {
            Ok(chunk) => output.extend(chunk),
            Err(_) => panic!("no prompt:\n{}", screen(&output)),
        }
    }
    writer.write_all(typed.as_bytes()).unwrap();
    let status = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || child.wait().unwrap()),
    )
    .await
    .expect("krt finishes within 2 minutes")
    .unwrap();
    drop(writer);
    drop(pair.master);
    while let Ok(chunk) = received.recv_timeout(Duration::from_secs(5)) {
        output.extend(chunk);
    }
    (status.exit_code(), output)
}

fn screen(bytes: &[u8]) -> String {
    let mut parser = vt100::Parser::new(ROWS, COLS, 0);
    parser.process(bytes);
    parser.screen().rows(0, COLS).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_progress_display_ends_with_every_resource_and_its_health() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("pty");
    let args = |more: &[&str]| {
        let mut a = vec![
            "--kubeconfig".to_owned(),
            cluster.kubeconfig.display().to_string(),
        ];
        a.extend(more.iter().map(|s| s.to_string()));
        a
    };
    let file = workspace().join("examples/quickstart.yaml");
    let file = file.to_str().unwrap();
    let (code, bytes) = on_terminal(dir.path(), args(&["apply", "-f", file]), "y\n", &[]).await;
    let text = screen(&bytes);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("Apply these changes to stack 'default'? [y/N] y"),
        "{text}"
    );
    for id in [
        "v1:Namespace:quickstart",
        "v1:ConfigMap:quickstart:web-config",
        "apps/v1:Deployment:quickstart:web",
        "v1:Service:quickstart:web",
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" {id} ")))
            .unwrap_or_else(|| panic!("no line for {id} on the final screen:\n{text}"));
        assert!(line.trim_start().starts_with("✓ created"), "{line}\n{text}");
        assert!(line.contains("Current"), "{line}\n{text}");
    }
    assert!(
        !text.contains("pending") && !text.contains("waiting"),
        "the display settled:\n{text}"
    );
    assert!(text.contains("Applied: 4 created, 0 updated"), "{text}");
    assert!(
        bytes.windows(5).any(|w| w == b"\x1b[32m"),
        "colors on a terminal"
    );

    // A declined prompt changes nothing; NO_COLOR turns colors off.
    std::fs::write(
        dir.path().join("more.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: default}\n",
    )
    .unwrap();
    let (code, bytes) = on_terminal(
        dir.path(),
        args(&["apply", "-f", "more.yaml"]),
        "n\n",
        &[("NO_COLOR", "1")],
    )
    .await;
    let text = screen(&bytes);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("Apply cancelled; nothing was changed."),
        "{text}"
    );
    assert!(
        !bytes
            .windows(5)
            .any(|w| w == b"\x1b[32m" || w == b"\x1b[31m"),
        "no colors with NO_COLOR"
    );
    assert!(cluster.get_configmap("default", "extra").await.is_none());
}

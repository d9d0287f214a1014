//! The soak with faults, one minute of it (issue 33): `tributary-load --soak` owns a real
//! `serve`, loads it with readers and OpenLineage writers (one-event and batched requests,
//! retried as openlineage-python retries) and `kill -9`s and restarts it every 15 s; on Neo4j it
//! also restarts the database, a throwaway one of this test's own (the suite's is never
//! stopped). It exits non-zero unless every acknowledged event is stored and applied once, no
//! edge has two evidence rows of one job, the change feed followed across the restarts has no
//! gap or repeat, and serve's memory stays bounded. The 30-minute run is in BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::SERIAL;

/// A Neo4j of the test's own on a free port, restartable on the same data (scripts/neo4j-start
/// with `TRIBUTARY_NEO4J_RUN_DIR`), stopped and removed when dropped.
pub(super) struct OwnNeo4j {
    dir: PathBuf,
    pub(super) port: u16,
}

impl OwnNeo4j {
    fn scripts() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts")
    }

    /// The environment both scripts get: this Neo4j's dir, and none of the suite's.
    fn env(&self) -> String {
        let dir = self.dir.display();
        format!("env -u TRIBUTARY_NEO4J_PID TRIBUTARY_NEO4J_HOME={dir} TRIBUTARY_NEO4J_RUN_DIR={dir}")
    }

    fn start_cmd(&self) -> String {
        format!("{} {} {} >/dev/null", self.env(), Self::scripts().join("neo4j-start").display(), self.port)
    }

    fn stop_cmd(&self, keep: bool) -> String {
        let keep = if keep { 1 } else { 0 };
        format!("{} TRIBUTARY_NEO4J_KEEP={keep} {}", self.env(), Self::scripts().join("neo4j-stop").display())
    }

    pub(super) fn start(dir: PathBuf) -> OwnNeo4j {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let neo = OwnNeo4j { dir, port };
        let out = Command::new("sh").args(["-c", &neo.start_cmd()]).output().unwrap();
        assert!(out.status.success(), "cannot start a Neo4j: {}", String::from_utf8_lossy(&out.stderr));
        neo
    }
}

impl OwnNeo4j {
    /// Stops it (keeping its data when `keep`), as an outage does.
    pub(super) fn stop(&self, keep: bool) {
        let out = Command::new("sh").args(["-c", &self.stop_cmd(keep)]).output().unwrap();
        assert!(out.status.success(), "cannot stop the Neo4j: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Starts it again on the same port with the same data.
    pub(super) fn start_again(&self) {
        let out = Command::new("sh").args(["-c", &self.start_cmd()]).output().unwrap();
        assert!(out.status.success(), "cannot start the Neo4j again: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for OwnNeo4j {
    fn drop(&mut self) {
        let _ = Command::new("sh").args(["-c", &self.stop_cmd(false)]).output();
    }
}

/// Runs a one-minute soak; fails with its report unless it exits 0.
fn soak(data_dir: &Path, store: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tributary-load"))
        .args(["--soak", "--serve-bin", env!("CARGO_BIN_EXE_tributary"), "--data-dir"])
        .arg(data_dir)
        .args(["--duration-secs", "60", "--chaos-every-secs", "15"])
        .args(["--clients", "4", "--writers", "2", "--batch", "10", "--tables", "40"])
        .args(store)
        .env_remove("TRIBUTARY_NEO4J_PID")
        .env_remove("TRIBUTARY_NEO4J_HOME")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let log = std::fs::read_to_string(data_dir.join("soak-serve.log")).unwrap_or_default();
    let tail: String = log.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(
        out.status.success(),
        "the soak failed:\n{report}\n{}\nserve's log ends:\n{tail}",
        String::from_utf8_lossy(&out.stderr)
    );
    // It did what it says: serve was killed and came back, and the feed carried changes.
    assert!(report.contains("result: ok") && !report.contains("chaos: 0 kill -9"), "{report}");
    assert!(!report.contains("change feed: 0 positions"), "{report}");
    report.into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minute_of_load_with_serve_killed_every_15_s_loses_nothing_embedded() {
    let _one = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    soak(&dir.path().join("data"), &[]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minute_of_load_with_serve_and_neo4j_restarted_loses_nothing_neo4j() {
    let _one = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let neo = OwnNeo4j::start(dir.path().join("neo4j"));
    let restart = format!("{} && {}", neo.stop_cmd(true), neo.start_cmd());
    let store =
        ["--neo4j-uri".to_string(), format!("bolt://127.0.0.1:{}", neo.port), "--neo4j-restart-cmd".into(), restart];
    let report = soak(&dir.path().join("data"), &store);
    assert!(!report.contains(" 0 Neo4j restarts"), "{report}");
}

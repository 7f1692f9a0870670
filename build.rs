//! Records the git commit weft is built from (`WEFT_GIT_COMMIT`, "unknown" outside a git
//! checkout): checkpoints carry it, and a checkpoint from another build is refused.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=WEFT_GIT_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // Rebuild when HEAD moves: HEAD itself (a checkout), the branch it names (a commit) and
    // packed-refs. Only files that exist: cargo reruns a script whose file is missing every time.
    let git_dir = git(&["rev-parse", "--git-dir"]);
    let common = git(&["rev-parse", "--git-common-dir"]);
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let mut watch = vec![];
    if let Some(d) = &git_dir {
        watch.push(Path::new(d).join("HEAD"));
    }
    if let Some(c) = &common {
        watch.push(Path::new(c).join("packed-refs"));
        if let Some(b) = &branch {
            watch.push(Path::new(c).join(b));
        }
    }
    for p in watch.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

//! ARCHITECTURE.md's code map against the tree: every folder under `harness/src` has its row,
//! and every `harness/src` path a row names exists, so the map a newcomer reads first is the
//! code as it is.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness/ has a parent")
        .to_path_buf()
}

/// The section "Code map" of `doc`: from its heading to the next `## ` heading.
fn code_map(doc: &str) -> &str {
    doc.split("\n## ")
        .find(|s| s.starts_with("Code map"))
        .expect("ARCHITECTURE.md has a section \"Code map\"")
}

/// The paths of the map's rows: the backquoted names in each table row's first cell; a name
/// after the first that names no folder of its own (`cli.rs` after `harness/src/main.rs`,
/// `tests/` after `harness/src/broker/sqs/`) lives in the folder of the one before it.
fn row_paths(map: &str) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    for row in map.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split(" | ").next().unwrap_or_default();
        let mut folder = String::new();
        for (i, name) in first.split('`').enumerate() {
            if i % 2 == 0 {
                continue;
            }
            let bare = !folder.is_empty() && !name.trim_end_matches('/').contains('/');
            let path = if bare {
                format!("{folder}{name}")
            } else {
                name.to_string()
            };
            folder = match path.rfind('/') {
                Some(at) if !path.ends_with('/') => path[..=at].to_string(),
                _ => path.clone(),
            };
            paths.insert(path);
        }
    }
    paths
}

/// Every folder under `dir`, as `harness/src/.../` paths from the repository root.
fn folders(dir: &Path, found: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            let rel = path.strip_prefix(root()).expect("under the repository");
            found.insert(format!("{}/", rel.to_string_lossy()));
            folders(&path, found);
        }
    }
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

#[test]
fn every_folder_under_harness_src_has_its_row_in_the_code_map() {
    let rows = row_paths(code_map(&architecture()));
    let mut all = BTreeSet::new();
    folders(&root().join("harness/src"), &mut all);
    // broker/, broker/sqs/, profile/kinds/, runner/live/kinds/external_sqs/, ...: dozens today.
    assert!(all.len() > 20, "{all:?}");
    let missing: Vec<&String> = all.difference(&rows).collect();
    assert!(
        missing.is_empty(),
        "folders missing from ARCHITECTURE.md's code map (add a row `| `path/` | what lives \
         there |`): {missing:?}"
    );
}

#[test]
fn every_harness_src_path_the_code_map_names_exists() {
    let rows = row_paths(code_map(&architecture()));
    let gone: Vec<&String> = rows
        .iter()
        .filter(|p| p.starts_with("harness/src/") && !root().join(p).exists())
        .collect();
    assert!(
        gone.is_empty(),
        "the code map names paths that do not exist: {gone:?}"
    );
}

#[test]
fn a_row_names_its_paths_and_a_bare_name_lives_beside_the_one_before() {
    let map = "\
## Code map
| path | what |
|---|---|
| `harness/src/main.rs`, `cli.rs` | the command line |
| `harness/src/broker/` | brokers, in `queue.rs` |
| `harness/src/broker/sqs/`, `tests/` | the SQS API |
";
    let got: Vec<String> = row_paths(map).into_iter().collect();
    // The row's first cell only (`queue.rs` is in the second); `tests/` is under `sqs/`.
    assert_eq!(
        got,
        [
            "harness/src/broker/",
            "harness/src/broker/sqs/",
            "harness/src/broker/sqs/tests/",
            "harness/src/cli.rs",
            "harness/src/main.rs",
        ]
    );
    // A folder left out is found missing.
    let mut all = BTreeSet::new();
    all.insert("harness/src/chaos/".to_string());
    assert_eq!(all.difference(&row_paths(map)).count(), 1);
}

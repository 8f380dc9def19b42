// Fixture folders are found from trybuild's project (target/tests/trybuild/<crate>).
fn main() {
    let _ = mcp_runtime::skills!("../../../../tests/ui/skills/missing_skill_md");
}

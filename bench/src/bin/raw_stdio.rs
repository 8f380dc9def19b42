//! The stdio floor: what a stdio MCP server cannot beat. std only, no async
//! runtime, no MCP: it reads newline-delimited JSON-RPC from stdin, parses
//! each line with serde_json (as the HTTP ceiling does), and answers every
//! request (a line with an `id`) with the result `ours` gives a `tools/call`
//! of `echo`, flushing when no further input is buffered. `raw-stdio`.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;

/// What follows the id in `ours`' answer to a `tools/call` of `echo`, byte for byte.
const RESULT: &[u8] = br#","result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ours","version":"0.1.0"}}}}
"#;

fn main() -> ExitCode {
    match serve() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("raw-stdio: {e}");
            ExitCode::FAILURE
        }
    }
}

fn serve() -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut writer = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return writer.flush();
        }
        let Ok(request) = serde_json::from_slice::<serde_json::Value>(&line) else {
            continue;
        };
        // Notifications (no id) get no answer.
        if let Some(id) = request.get("id") {
            writer.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
            serde_json::to_writer(&mut writer, id)?;
            writer.write_all(RESULT)?;
        }
        if reader.buffer().is_empty() {
            writer.flush()?;
        }
    }
}

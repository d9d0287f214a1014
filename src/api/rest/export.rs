//! Graphs people can take away: the `format` parameter of `GET /api/lineage/graph` and
//! `GET /admin/lineage/graph|impact|pii-flow` (`json`, the default, or `csv`, `dot`, `graphml`,
//! `mermaid`).
//!
//! A handler turns its service answer into one neutral `Export` (nodes with a qualified name,
//! a datastore and a few attributes; edges with their ends, type, source type, operation and
//! job), and one writer per format renders it. Names are data, never markup: each writer
//! escapes for its own syntax, so a table named `=HYPERLINK(...)`, `a"b`, `<x>` or `]` with a
//! newline stays a name:
//! - CSV (RFC 4180 through the `csv` crate): a cell starting with `=`, `+`, `-`, `@`, a tab or
//!   a carriage return gets a leading `'`, so a spreadsheet shows it as text instead of running
//!   it as a formula (OWASP's advice for CSV injection). One row per edge, as OpenMetadata's
//!   lineage export.
//! - DOT: every id and value is a quoted string with `\` and `"` escaped and newlines as `\n`.
//! - GraphML: XML with `&<>"'` escaped, line breaks as character references, and the
//!   characters XML 1.0 cannot carry replaced by U+FFFD.
//! - Mermaid: a `flowchart LR` with generated node ids (`n0`, `n1`, ...) and quoted labels in
//!   which Mermaid's entity codes replace `"`, `#`, `<`, `>`, `|`, `` ` `` and `&`, and line
//!   breaks become spaces.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use std::collections::HashMap;

use super::shapes::{Lookups, Want};
use super::ApiError;
use crate::auth::Caller;
use crate::domain::{container_key, Edge, End, Id};
use crate::error::Error;
use crate::service::{self, external_node_id, Lineage};

/// The query parameter that names the format.
pub const FORMAT: &str = "format";

// What an answer is written as: the `format` query parameter (`json` when absent). The doc
// comment is its description in the OpenAPI document, kept as it was.
/// The `format` values, for the OpenAPI document.
#[derive(utoipa::ToSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[schema(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Json,
    Csv,
    Dot,
    Graphml,
    Mermaid,
}

const FORMATS: [(&str, Format); 5] = [
    ("json", Format::Json),
    ("csv", Format::Csv),
    ("dot", Format::Dot),
    ("graphml", Format::Graphml),
    ("mermaid", Format::Mermaid),
];

/// Case-insensitive, trimmed; anything else is refused naming the allowed values.
impl<'de> serde::Deserialize<'de> for Format {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
        let raw = <String as serde::Deserialize>::deserialize(d)?;
        let wanted = raw.trim().to_ascii_lowercase();
        FORMATS.iter().find(|(name, _)| *name == wanted).map(|(_, f)| *f).ok_or_else(|| {
            let names: Vec<&str> = FORMATS.iter().map(|(n, _)| *n).collect();
            serde::de::Error::custom(format!("must be one of {}; got {raw:?}", names.join(", ")))
        })
    }
}

impl Format {
    /// An unknown `format` is 400 naming the allowed values, on every route that takes it (the
    /// `/api/...` routes' other invalid input is 422); `params` reads it first.
    pub fn refusal(message: String) -> ApiError {
        ApiError::detail(StatusCode::BAD_REQUEST, message)
    }

    fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Csv => "text/csv; charset=utf-8",
            Format::Dot => "text/vnd.graphviz; charset=utf-8",
            Format::Graphml => "application/graphml+xml; charset=utf-8",
            Format::Mermaid => "text/vnd.mermaid; charset=utf-8",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Dot => "dot",
            Format::Graphml => "graphml",
            Format::Mermaid => "mmd",
        }
    }
}

/// A node: a table, a column or an asset outside the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// `c<id>`, `f<id>` or `ext:<source_type>:<fqn>`.
    pub key: String,
    /// `table`, `column` or `external`.
    pub kind: &'static str,
    /// `database.schema.name` (`.column` for a column), or the external asset's fqn.
    pub name: String,
    pub datastore: Option<String>,
    /// More attributes (`distance`, `is_target`, ...), in order.
    pub attributes: Vec<(&'static str, String)>,
}

/// An edge between two nodes' keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub id: Id,
    pub source: String,
    pub target: String,
    /// `table` or `column`.
    pub kind: &'static str,
    pub source_type: String,
    pub operation: Option<String>,
    /// The OpenLineage job behind it (from its evidence), when the caller may see evidence
    /// details.
    pub job: Option<String>,
    pub derived: Option<bool>,
}

/// A graph to write: its nodes (each key once, in order) and edges.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Export {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// Each node's position in `nodes`, by key.
    index: HashMap<String, usize>,
}

impl Export {
    /// The node of an end, with what the lookups know of it.
    pub fn node_of(end: &End, source_type: &str, l: &Lookups) -> Node {
        let table = |id: Id| l.containers.get(&id);
        let qualified = |id: Id| table(id).map(|c| container_key(c.database.as_deref(), c.schema.as_deref(), &c.name));
        let datastore = |id: Id| table(id).and_then(|c| l.datastores.get(&c.datastore_id)).map(|d| d.name.clone());
        match end {
            End::Container { id } => Node {
                key: format!("c{id}"),
                kind: "table",
                name: qualified(*id).unwrap_or_else(|| format!("(deleted container {id})")),
                datastore: datastore(*id),
                attributes: Vec::new(),
            },
            End::Field { id, container_id } => Node {
                key: format!("f{id}"),
                kind: "column",
                name: format!(
                    "{}.{}",
                    qualified(*container_id).unwrap_or_else(|| format!("(deleted container {container_id})")),
                    l.fields.get(id).map_or_else(|| format!("(deleted field {id})"), |f| f.name.clone())
                ),
                datastore: datastore(*container_id),
                attributes: Vec::new(),
            },
            End::External { fqn } => Node {
                key: external_node_id(source_type, fqn),
                kind: "external",
                name: fqn.clone(),
                datastore: None,
                attributes: Vec::new(),
            },
        }
    }

    /// Adds a node, or the attributes to the node of that key already there.
    pub fn add_node(&mut self, node: Node) {
        match self.index.get(&node.key) {
            Some(&i) => self.nodes[i].attributes.extend(node.attributes),
            None => {
                self.index.insert(node.key.clone(), self.nodes.len());
                self.nodes.push(node);
            }
        }
    }

    /// Adds an edge and its two ends (the job read from its evidence when `caller` may see
    /// evidence details, by the rule of every answer: `Lookups::evidence_visible`).
    pub fn add_edge(&mut self, e: &Edge, l: &Lookups, caller: &Caller) {
        let (source, target) =
            (Self::node_of(&e.source, &e.source_type, l), Self::node_of(&e.target, &e.source_type, l));
        let job = l.evidence_visible(caller, e).then(|| job_of(l, e.id)).flatten();
        self.links.push(Link {
            id: e.id,
            source: source.key.clone(),
            target: target.key.clone(),
            kind: if matches!(e.source, End::Field { .. }) || matches!(e.target, End::Field { .. }) {
                "column"
            } else {
                "table"
            },
            source_type: e.source_type.clone(),
            operation: e.operation.clone(),
            job,
            derived: e.derived,
        });
        for n in [source, target] {
            if !self.index.contains_key(&n.key) {
                self.add_node(n);
            }
        }
    }

    fn node(&self, key: &str) -> Option<&Node> {
        self.index.get(key).map(|&i| &self.nodes[i])
    }

    /// The answer in `format` (not JSON, which the handlers write from their own shapes).
    pub fn respond(&self, format: Format, title: &str) -> Response {
        let body = match format {
            Format::Csv => self.csv(),
            Format::Dot => self.dot(title),
            Format::Graphml => self.graphml(title),
            Format::Mermaid | Format::Json => self.mermaid(),
        };
        let disposition = format!("inline; filename=\"lineage.{}\"", format.extension());
        ([(header::CONTENT_TYPE, format.content_type().to_string()), (header::CONTENT_DISPOSITION, disposition)], body)
            .into_response()
    }

    /// One row per edge: both ends' qualified names and datastores, the edge's type, source
    /// type, operation and job.
    pub fn csv(&self) -> String {
        let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
        let header = [
            "edge_id",
            "source",
            "source_datastore",
            "source_kind",
            "target",
            "target_datastore",
            "target_kind",
            "type",
            "source_type",
            "operation",
            "job",
            "derived",
        ];
        let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
        for e in &self.links {
            let (s, t) = (self.node(&e.source), self.node(&e.target));
            rows.push(vec![
                e.id.to_string(),
                cell(s.map_or(e.source.as_str(), |n| n.name.as_str())),
                cell(s.and_then(|n| n.datastore.as_deref()).unwrap_or("")),
                s.map_or("", |n| n.kind).to_string(),
                cell(t.map_or(e.target.as_str(), |n| n.name.as_str())),
                cell(t.and_then(|n| n.datastore.as_deref()).unwrap_or("")),
                t.map_or("", |n| n.kind).to_string(),
                e.kind.to_string(),
                cell(&e.source_type),
                cell(e.operation.as_deref().unwrap_or("")),
                cell(e.job.as_deref().unwrap_or("")),
                e.derived.map(|d| d.to_string()).unwrap_or_default(),
            ]);
        }
        for row in rows {
            // Writing to a Vec cannot fail.
            let _ = w.write_record(&row);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    /// A Graphviz digraph, left to right; every id and value a quoted string.
    pub fn dot(&self, title: &str) -> String {
        let mut out = format!("digraph {} {{\n  rankdir=LR;\n  node [shape=box];\n", dot_string(title));
        for n in &self.nodes {
            let mut attrs = vec![("label", n.name.clone()), ("kind", n.kind.to_string())];
            if let Some(d) = &n.datastore {
                attrs.push(("datastore", d.clone()));
            }
            attrs.extend(n.attributes.iter().cloned());
            if n.kind == "external" {
                attrs.push(("shape", "ellipse".into()));
            }
            out.push_str(&format!("  {} [{}];\n", dot_string(&n.key), dot_attributes(&attrs)));
        }
        for e in &self.links {
            let mut attrs =
                vec![("id", e.id.to_string()), ("type", e.kind.to_string()), ("source_type", e.source_type.clone())];
            attrs.extend(e.operation.clone().map(|o| ("operation", o)));
            attrs.extend(e.job.clone().map(|j| ("job", j)));
            attrs.extend(e.derived.map(|d| ("derived", d.to_string())));
            attrs.push(("label", e.operation.clone().unwrap_or_else(|| e.source_type.clone())));
            out.push_str(&format!(
                "  {} -> {} [{}];\n",
                dot_string(&e.source),
                dot_string(&e.target),
                dot_attributes(&attrs)
            ));
        }
        out.push_str("}\n");
        out
    }

    /// GraphML with a `key` per attribute, for networkx, yEd or Gephi.
    pub fn graphml(&self, title: &str) -> String {
        let mut node_keys: Vec<&str> = vec!["name", "kind", "datastore"];
        for n in &self.nodes {
            for (k, _) in &n.attributes {
                if !node_keys.contains(k) {
                    node_keys.push(k);
                }
            }
        }
        let edge_keys = ["edge_id", "type", "source_type", "operation", "job", "derived"];
        let mut out = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n",
        );
        for k in &node_keys {
            out.push_str(&format!("  <key id=\"n_{k}\" for=\"node\" attr.name=\"{k}\" attr.type=\"string\"/>\n"));
        }
        for k in edge_keys {
            out.push_str(&format!("  <key id=\"e_{k}\" for=\"edge\" attr.name=\"{k}\" attr.type=\"string\"/>\n"));
        }
        out.push_str(&format!("  <graph id=\"{}\" edgedefault=\"directed\">\n", xml(title)));
        for n in &self.nodes {
            out.push_str(&format!("    <node id=\"{}\">\n", xml(&n.key)));
            let mut data: Vec<(&str, String)> = vec![("name", n.name.clone()), ("kind", n.kind.to_string())];
            data.extend(n.datastore.clone().map(|d| ("datastore", d)));
            data.extend(n.attributes.iter().cloned());
            for (k, v) in data {
                out.push_str(&format!("      <data key=\"n_{k}\">{}</data>\n", xml(&v)));
            }
            out.push_str("    </node>\n");
        }
        for e in &self.links {
            out.push_str(&format!(
                "    <edge id=\"e{}\" source=\"{}\" target=\"{}\">\n",
                e.id,
                xml(&e.source),
                xml(&e.target)
            ));
            let mut data: Vec<(&str, String)> = vec![
                ("edge_id", e.id.to_string()),
                ("type", e.kind.to_string()),
                ("source_type", e.source_type.clone()),
            ];
            data.extend(e.operation.clone().map(|o| ("operation", o)));
            data.extend(e.job.clone().map(|j| ("job", j)));
            data.extend(e.derived.map(|d| ("derived", d.to_string())));
            for (k, v) in data {
                out.push_str(&format!("      <data key=\"e_{k}\">{}</data>\n", xml(&v)));
            }
            out.push_str("    </edge>\n");
        }
        out.push_str("  </graph>\n</graphml>\n");
        out
    }

    /// A Mermaid `flowchart LR`, ready for a fenced `mermaid` block in Markdown.
    pub fn mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        let id = |key: &str| self.index.get(key).map(|i| format!("n{i}"));
        for (i, n) in self.nodes.iter().enumerate() {
            let label = match &n.datastore {
                Some(d) => format!("{} ({})", n.name, d),
                None => n.name.clone(),
            };
            let (open, close) = if n.kind == "external" { ("([", "])") } else { ("[", "]") };
            out.push_str(&format!("  n{i}{open}\"{}\"{close}\n", mermaid_text(&label)));
        }
        for e in &self.links {
            let (Some(s), Some(t)) = (id(&e.source), id(&e.target)) else { continue };
            let label = e.operation.as_deref().unwrap_or(&e.source_type);
            out.push_str(&format!("  {s} -->|\"{}\"| {t}\n", mermaid_text(label)));
        }
        out
    }
}

/// The export of a lineage graph: its nodes (the centre flagged `is_target`), its container
/// edges and its edges to and from external assets.
pub async fn of_graph(lineage: &Lineage, caller: &Caller, g: &service::LineageGraph) -> Result<Export, Error> {
    let edges: Vec<&Edge> = g.edges.iter().chain(&g.external_edges).collect();
    let mut want = Want::default().edges(edges.iter().copied(), true);
    want.containers.extend(g.nodes.iter().map(|n| n.container_id));
    let l = want.read(lineage).await?;
    let mut x = Export::default();
    for n in &g.nodes {
        let mut node = Export::node_of(&End::Container { id: n.container_id }, "", &l);
        node.attributes.push(("is_target", n.is_target.to_string()));
        x.add_node(node);
    }
    for e in edges {
        x.add_edge(e, &l, caller);
    }
    Ok(x)
}

/// The export of a transitive answer (`impact`, `piiFlow`) from `start`: each node reached
/// with its `distance`, the edge that first reached it, and the external assets on the way.
pub async fn of_transitive(
    lineage: &Lineage,
    caller: &Caller,
    start: &End,
    t: &service::Transitive,
) -> Result<Export, Error> {
    let vias: Vec<&Edge> = t.reached.iter().map(|r| &r.via).chain(t.externals.iter().map(|x| &x.via)).collect();
    let mut want = Want::default().edges(vias.iter().copied(), true);
    want.containers.extend(start.container_id());
    want.fields.extend(super::shapes::field_end(start));
    let l = want.read(lineage).await?;
    let mut x = Export::default();
    let mut first = Export::node_of(start, "", &l);
    first.attributes.push(("distance", "0".into()));
    x.add_node(first);
    for e in vias {
        x.add_edge(e, &l, caller);
    }
    let prefix = if matches!(start, End::Field { .. }) { "f" } else { "c" };
    let distance: HashMap<String, i64> = t
        .reached
        .iter()
        .map(|r| (format!("{prefix}{}", r.id), r.distance))
        .chain(t.externals.iter().map(|e| (e.id.clone(), e.distance)))
        .collect();
    for n in &mut x.nodes {
        if n.attributes.iter().all(|(k, _)| *k != "distance") {
            if let Some(d) = distance.get(&n.key) {
                n.attributes.push(("distance", d.to_string()));
            }
        }
    }
    Ok(x)
}

/// The job named in an edge's evidence details (`job { namespace name }`), as `namespace/name`.
fn job_of(l: &Lookups, edge: Id) -> Option<String> {
    l.evidence.get(&edge)?.iter().find_map(|v| {
        let job = v.details.as_ref()?.get("job")?;
        let name = job.get("name")?.as_str()?;
        Some(match job.get("namespace").and_then(|n| n.as_str()) {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name.to_string(),
        })
    })
}

/// A CSV cell a spreadsheet will not run: a leading `=`, `+`, `-`, `@`, tab or carriage return
/// gets a `'` before it.
pub fn cell(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_string(),
    }
}

/// A DOT quoted string: `"` and `\` escaped, line breaks as `\n`.
pub fn dot_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn dot_attributes(attrs: &[(&str, String)]) -> String {
    attrs.iter().map(|(k, v)| format!("{k}={}", dot_string(v))).collect::<Vec<_>>().join(", ")
}

/// XML text or attribute content: the five specials escaped, line breaks and tabs as character
/// references (so attribute normalisation keeps them), what XML 1.0 cannot carry as U+FFFD.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a quoted Mermaid label: its entity codes for the characters that end or change
/// a label, line breaks as spaces.
pub fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '|' => out.push_str("#124;"),
            '`' => out.push_str("#96;"),
            '&' => out.push_str("#amp;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hostile() -> Export {
        let names = ["=HYPERLINK(\"http://x\",\"y\")", "a\"b\\c", "<t>&amp;]\nnext", "@sum|x`#"];
        let nodes: Vec<Node> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Node {
                key: format!("c{i}"),
                kind: "table",
                name: n.to_string(),
                datastore: Some("-ds".into()),
                attributes: vec![("distance", i.to_string())],
            })
            .collect();
        let links = (1..names.len())
            .map(|i| Link {
                id: i as i64,
                source: "c0".into(),
                target: format!("c{i}"),
                kind: "table",
                source_type: "manual".into(),
                operation: Some("+op".into()),
                job: Some("ns/=job".into()),
                derived: None,
            })
            .collect();
        let mut x = Export::default();
        for n in nodes {
            x.add_node(n);
        }
        x.links = links;
        x
    }

    #[test]
    fn csv_cells_are_never_formulas() {
        let text = hostile().csv();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap_or_default()).collect();
        assert_eq!(rows.len(), 3);
        for row in &rows {
            for c in row.iter() {
                assert!(!c.starts_with(['=', '+', '-', '@']), "{c:?} in {text}");
            }
        }
        assert_eq!(&rows[0][1], "'=HYPERLINK(\"http://x\",\"y\")");
        assert_eq!(&rows[1][4], "<t>&amp;]\nnext");
    }

    #[test]
    fn escaping_keeps_names_data() {
        assert_eq!(dot_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        assert_eq!(xml("<a href='x'>&\u{1}\n"), "&lt;a href=&apos;x&apos;&gt;&amp;\u{FFFD}&#10;");
        assert_eq!(mermaid_text("a\"]\n|`#<"), "a#quot;] #124;#96;#35;#lt;");
        let m = hostile().mermaid();
        assert!(m.starts_with("flowchart LR\n"));
        // One line per node and edge: no name broke a line.
        assert_eq!(m.lines().count(), 1 + 4 + 3, "{m}");
        let dot = hostile().dot("lineage");
        assert_eq!(dot.lines().count(), 3 + 4 + 3 + 1, "{dot}");
        let g = hostile().graphml("lineage");
        assert!(!g.contains("<t>") && g.contains("&lt;t&gt;&amp;amp;]&#10;next"), "{g}");
    }
}

//! Demo mode: fixture question sets, embedded in the binary, fed through the same channel agents use.

use crossbeam_channel::Receiver;

use crate::protocol::{Envelope, Incoming, Invalid, Outcome};
use crate::transport::{Provenance, Request};

/// One embedded question set: a raw AskUserQuestion tool input.
#[derive(Clone, Copy, Debug)]
pub struct Fixture {
    pub name: &'static str,
    pub summary: &'static str,
    pub json: &'static str,
}

macro_rules! fixture {
    ($name:literal, $summary:literal) => {
        Fixture {
            name: $name,
            summary: $summary,
            json: include_str!(concat!("../../assets/fixtures/", $name, ".json")),
        }
    };
}

/// Every demo set, in the order the demo shows them.
pub const FIXTURES: &[Fixture] = &[
    fixture!("database", "seed 000: which database, one single-select question"),
    fixture!("library-ja", "seed 004: a library question in Japanese with (推奨)"),
    fixture!("settings-capture", "the three questions of the real Claude Code capture"),
    fixture!("four-questions", "four questions, single- and multi-select"),
    fixture!("multi-select", "a four-option multi-select"),
    fixture!("previews", "previews: ASCII mockups, code in three languages, a table"),
    fixture!("korean", "questions in Korean"),
    fixture!("thai", "questions in Thai, with an emoji"),
    fixture!("edge-cases", "long texts, labels with \", \" and quotes, soft-invalid input"),
];

/// The fixture with this name.
pub fn find(name: &str) -> Option<&'static Fixture> {
    FIXTURES.iter().find(|fixture| fixture.name == name)
}

/// Why a fixture cannot become a request (only possible if an embedded file is broken).
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("demo fixture {name} is not JSON: {source}")]
    Json { name: &'static str, source: serde_json::Error },
    #[error("demo fixture {name} is refused: {source}")]
    Invalid { name: &'static str, source: Invalid },
}

impl Fixture {
    /// The fixture as a request from the `demo` source, and the receiver of its outcome.
    pub fn request(&self) -> Result<(Request, Receiver<Outcome>), FixtureError> {
        let input = serde_json::from_str(self.json)
            .map_err(|source| FixtureError::Json { name: self.name, source })?;
        let incoming = Incoming { envelope: Envelope::ToolInput, input };
        let name = Some(self.name.to_owned());
        let provenance = Provenance::new("demo", name.clone()).with_project(name);
        Request::new(incoming, provenance)
            .map_err(|source| FixtureError::Invalid { name: self.name, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_is_a_valid_request() {
        for fixture in FIXTURES {
            let (request, _outcome) = fixture.request().expect("embedded fixtures are valid");
            let soft = !request.core.warnings.is_empty();
            assert_eq!(
                soft,
                fixture.name == "edge-cases",
                "only edge-cases warns: {}",
                fixture.name
            );
        }
    }
}

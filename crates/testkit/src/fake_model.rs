//! `FakeModel`: bosun's model server (`bosun_model_server::ModelServer`) for tests, started with
//! a panic instead of an error when it cannot listen. Everything else is the server's own.

use std::ops::Deref;

pub use bosun_model_server::{Api, Logged, ModelServer, Reply, Usage, DEFAULT_TEXT, SIDE_TEXT};

/// A model server on 127.0.0.1, listening until dropped.
pub struct FakeModel(ModelServer);

impl FakeModel {
    /// An Anthropic Messages API server.
    pub fn anthropic() -> Self {
        Self::start(Api::Anthropic)
    }

    /// An OpenAI Responses API server.
    pub fn openai() -> Self {
        Self::start(Api::OpenAi)
    }

    /// A Gemini API server.
    pub fn gemini() -> Self {
        Self::start(Api::Gemini)
    }

    /// A server for `api` on a free port of 127.0.0.1.
    pub fn start(api: Api) -> Self {
        Self(ModelServer::start(api).unwrap_or_else(|e| panic!("fake model: {e}")))
    }

    /// The tokens its answers to main-loop requests reported, together, as bosun's ledger counts
    /// them.
    pub fn main_tokens(&self) -> bosun_core::usage::Tokens {
        let mut total = bosun_core::usage::Tokens::default();
        for used in self.main_requests().iter().filter_map(|r| r.usage) {
            let tokens = bosun_core::usage::Tokens {
                input: used.input,
                output: used.output,
                cache_write: used.cache_write,
                cache_read: used.cache_read,
            };
            total.add(&tokens);
        }
        total
    }

    /// What the main-loop requests' answers cost at bosun's own prices for `model`, answer by
    /// answer, in nano-dollars.
    pub fn main_cost(&self, model: &str) -> u64 {
        let prices = bosun_core::price::Prices::shipped();
        let price = prices.of(model).unwrap_or_else(|| panic!("no price for {model}"));
        self.main_requests()
            .iter()
            .filter_map(|r| r.usage)
            .map(|u| {
                let tokens = bosun_core::usage::Tokens {
                    input: u.input,
                    output: u.output,
                    cache_write: u.cache_write,
                    cache_read: u.cache_read,
                };
                let used = bosun_core::usage::Used {
                    response: String::new(),
                    at: None,
                    model: Some(model.to_owned()),
                    tokens,
                    cache_write_1h: 0,
                    cost: None,
                };
                price.cost(&used)
            })
            .sum()
    }
}

impl Deref for FakeModel {
    type Target = ModelServer;

    fn deref(&self) -> &ModelServer {
        &self.0
    }
}

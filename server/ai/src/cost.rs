//! Dollar cost of a call: per-million-token prices times tokens, as pi computes it.

use crate::model::ModelCost;
use crate::types::Usage;

/// Fills `usage.cost` from `prices` (dollars per million tokens) and the token counts.
pub fn apply_cost(usage: &mut Usage, prices: &ModelCost) {
    let per = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
    usage.cost.input = per(prices.input, usage.input);
    usage.cost.output = per(prices.output, usage.output);
    usage.cost.cache_read = per(prices.cache_read, usage.cache_read);
    usage.cost.cache_write = per(prices.cache_write, usage.cache_write);
    usage.cost.total =
        usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
    usage.cost.total_from_provider = Some(false);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_price_per_million_times_tokens() {
        let prices = ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        };
        let mut usage = Usage {
            input: 1_000,
            output: 2_000,
            cache_read: 10_000,
            cache_write: 400,
            reasoning: None,
            total_tokens: 13_400,
            ..Usage::default()
        };
        apply_cost(&mut usage, &prices);
        assert!((usage.cost.input - 0.003).abs() < 1e-12);
        assert!((usage.cost.output - 0.03).abs() < 1e-12);
        assert!((usage.cost.cache_read - 0.003).abs() < 1e-12);
        assert!((usage.cost.cache_write - 0.0015).abs() < 1e-12);
        assert!((usage.cost.total - 0.0375).abs() < 1e-12);
    }

    #[test]
    fn free_models_cost_nothing() {
        let mut usage = Usage {
            input: 5,
            output: 5,
            ..Usage::default()
        };
        apply_cost(&mut usage, &ModelCost::default());
        assert_eq!(usage.cost.total, 0.0);
    }
}

pub mod context;
pub mod documents;
pub mod position;

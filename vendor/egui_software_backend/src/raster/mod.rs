pub(crate) mod bary;
pub(crate) mod rect;
pub(crate) mod span;
pub(crate) mod tri;

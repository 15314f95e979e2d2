// These exist just to avoid bringing in glam or similar since egui doesn't.
pub(crate) mod i64vec2;
pub(crate) mod vec4;

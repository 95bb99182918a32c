//! `json/ext/parser` and `json/ext/generator`: the C half of CRuby 3.1's json 2.6, so that
//! the installed `json.rb`, `json/common.rb` and `json/add/*` run on top of it.
//!
//! Invariants:
//! - Both inits `require "json/common"` first, as json 2.6's C code does, and find the
//!   error classes (`JSON::ParserError`, `JSON::NestingError`, `JSON::GeneratorError`)
//!   by constant lookup when they raise: nothing is cached outside the VM's constants.
//! - Messages are json 2.6.1's, including the C source line numbers it prefixes them
//!   with ("859: unexpected token at '…'"), because programs and tests compare them.

pub mod generator;
pub mod parser;

use crate::core::load;
pub use crate::stdlib::{class_under, const_of, module_under};
use crate::error::Unwind;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The `JSON` module.
pub fn json_module(ctx: &mut Ctx) -> Value {
    let obj = ctx.c().object;
    module_under(ctx, obj, "JSON")
}

/// An exception of class `JSON::<name>` (StandardError when json/common was not loaded)
/// whose message is `msg` (any bytes, tagged UTF-8 like json's `rb_enc_raise`).
pub fn error(ctx: &mut Ctx, name: &str, msg: &[u8]) -> Unwind {
    let json = json_module(ctx);
    let k = const_of(ctx, json, name).unwrap_or(ctx.c().standard_error);
    let m = crate::core::string::new_from_bytes(ctx, msg);
    Unwind::Raise(ctx.new_error_value(k, m))
}

fn require_common(ctx: &mut Ctx) -> Result<()> {
    load::require(ctx, "json/common")?;
    Ok(())
}

pub fn init_parser(ctx: &mut Ctx) -> Result<()> {
    require_common(ctx)?;
    parser::init(ctx);
    Ok(())
}

pub fn init_generator(ctx: &mut Ctx) -> Result<()> {
    require_common(ctx)?;
    generator::init(ctx);
    Ok(())
}

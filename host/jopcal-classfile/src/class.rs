//! The class-file container: magic, versions, constant pool, fields, methods
//! and each method's `Code` attribute. Errors carry the byte offset.

use crate::num::{u16_, u32_, u8_};
use nom::bytes::complete::take;
use nom::number::complete::{be_f32, be_f64, be_i32, be_i64, be_u16, be_u32, be_u8};
use nom::Parser;

/// A constant-pool entry (index 0 and the slot after a long/double are `Unusable`).
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    Unusable,
    Utf8(String),
    Integer(i32),
    Float(f32),
    Long(i64),
    Double(f64),
    Class(u16),
    String(u16),
    Fieldref { class: u16, name_and_type: u16 },
    Methodref { class: u16, name_and_type: u16 },
    InterfaceMethodref { class: u16, name_and_type: u16 },
    NameAndType { name: u16, descriptor: u16 },
    MethodHandle { kind: u8, reference: u16 },
    MethodType(u16),
    Dynamic { bootstrap: u16, name_and_type: u16 },
    InvokeDynamic { bootstrap: u16, name_and_type: u16 },
    Module(u16),
    Package(u16),
}

/// A method's `Code` attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    pub max_stack: u16,
    pub max_locals: u16,
    pub bytecode: Vec<u8>,
    /// `(start_pc, end_pc, handler_pc, catch_type)`.
    pub exception_table: Vec<(u16, u16, u16, u16)>,
}

/// A method with its code (none for abstract and native methods).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    pub access: u16,
    pub name: String,
    pub descriptor: String,
    pub code: Option<Code>,
}

/// A field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub access: u16,
    pub name: String,
    pub descriptor: String,
}

/// A parsed class file.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassFile {
    pub minor: u16,
    pub major: u16,
    pub constant_pool: Vec<Constant>,
    pub access: u16,
    pub this_class: String,
    pub super_class: Option<String>,
    pub interfaces: Vec<String>,
    pub fields: Vec<Field>,
    pub methods: Vec<Method>,
}

/// Method access flag: native.
pub const ACC_NATIVE: u16 = 0x0100;
/// Method access flag: static.
pub const ACC_STATIC: u16 = 0x0008;

/// A class file that does not parse; `offset` is the byte where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {message}")]
pub struct ClassFileError {
    pub offset: usize,
    pub message: String,
}

/// `(access, name, descriptor, code)` of a field or method, as read.
type Member = (u16, String, String, Option<Code>);

/// Decodes the JVM's modified UTF-8 (NUL as C0 80, supplementary characters as surrogate pairs).
pub fn modified_utf8(bytes: &[u8]) -> Option<String> {
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            0x01..=0x7f => {
                units.push(u16::from(b));
                i += 1;
            }
            0xc0..=0xdf => {
                let c = *bytes.get(i + 1)?;
                if c & 0xc0 != 0x80 {
                    return None;
                }
                units.push((u16::from(b & 0x1f) << 6) | u16::from(c & 0x3f));
                i += 2;
            }
            0xe0..=0xef => {
                let (c, d) = (*bytes.get(i + 1)?, *bytes.get(i + 2)?);
                if c & 0xc0 != 0x80 || d & 0xc0 != 0x80 {
                    return None;
                }
                units.push((u16::from(b & 0x0f) << 12) | (u16::from(c & 0x3f) << 6) | u16::from(d & 0x3f));
                i += 3;
            }
            _ => return None,
        }
    }
    Some(String::from_utf16_lossy(&units))
}

struct Parser_<'a> {
    all: &'a [u8],
}

impl<'a> Parser_<'a> {
    fn offset(&self, rest: &[u8]) -> usize {
        self.all.len() - rest.len()
    }

    fn err(&self, rest: &[u8], message: impl Into<String>) -> ClassFileError {
        ClassFileError {
            offset: self.offset(rest),
            message: message.into(),
        }
    }

    fn truncated(
        &self,
        rest: &'a [u8],
        what: &str,
    ) -> impl Fn(nom::Err<nom::error::Error<&'a [u8]>>) -> ClassFileError + '_ {
        let e = self.err(rest, format!("truncated {what}"));
        move |_| e.clone()
    }
}

/// Reads constant-pool entries from `i`: `count` slots (index 0 included, as in
/// the class file), or, without a count, until the bytes run out (the form
/// JVMTI's GetConstantPool returns).
fn read_pool<'a>(
    p: &Parser_<'a>,
    mut i: &'a [u8],
    count: Option<usize>,
) -> Result<(&'a [u8], Vec<Constant>), ClassFileError> {
    let mut pool = vec![Constant::Unusable];
    while count.map_or(!i.is_empty(), |n| pool.len() < n) {
        let at = i;
        let (r, tag) = u8_(i).map_err(p.truncated(at, "constant pool"))?;
        let t = p.truncated(at, "constant pool");
        let pair = |r| (be_u16, be_u16).parse(r);
        let (r, c, wide) = match tag {
            1 => {
                let (r, len) = u16_(r).map_err(&t)?;
                let (r, raw) = take::<_, _, nom::error::Error<&[u8]>>(len).parse(r).map_err(&t)?;
                let s = modified_utf8(raw).ok_or_else(|| p.err(at, "malformed modified UTF-8 in constant"))?;
                (r, Constant::Utf8(s), false)
            }
            3 => be_i32
                .parse(r)
                .map(|(r, v)| (r, Constant::Integer(v), false))
                .map_err(&t)?,
            4 => be_f32
                .parse(r)
                .map(|(r, v)| (r, Constant::Float(v), false))
                .map_err(&t)?,
            5 => be_i64.parse(r).map(|(r, v)| (r, Constant::Long(v), true)).map_err(&t)?,
            6 => be_f64
                .parse(r)
                .map(|(r, v)| (r, Constant::Double(v), true))
                .map_err(&t)?,
            7 => u16_(r).map(|(r, v)| (r, Constant::Class(v), false)).map_err(&t)?,
            8 => u16_(r).map(|(r, v)| (r, Constant::String(v), false)).map_err(&t)?,
            9 => pair(r)
                .map(|(r, (a, b))| {
                    (
                        r,
                        Constant::Fieldref {
                            class: a,
                            name_and_type: b,
                        },
                        false,
                    )
                })
                .map_err(&t)?,
            10 => pair(r)
                .map(|(r, (a, b))| {
                    (
                        r,
                        Constant::Methodref {
                            class: a,
                            name_and_type: b,
                        },
                        false,
                    )
                })
                .map_err(&t)?,
            11 => pair(r)
                .map(|(r, (a, b))| {
                    (
                        r,
                        Constant::InterfaceMethodref {
                            class: a,
                            name_and_type: b,
                        },
                        false,
                    )
                })
                .map_err(&t)?,
            12 => pair(r)
                .map(|(r, (a, b))| (r, Constant::NameAndType { name: a, descriptor: b }, false))
                .map_err(&t)?,
            15 => (be_u8, be_u16)
                .parse(r)
                .map(|(r, (k, v))| (r, Constant::MethodHandle { kind: k, reference: v }, false))
                .map_err(&t)?,
            16 => u16_(r).map(|(r, v)| (r, Constant::MethodType(v), false)).map_err(&t)?,
            17 => pair(r)
                .map(|(r, (a, b))| {
                    (
                        r,
                        Constant::Dynamic {
                            bootstrap: a,
                            name_and_type: b,
                        },
                        false,
                    )
                })
                .map_err(&t)?,
            18 => pair(r)
                .map(|(r, (a, b))| {
                    (
                        r,
                        Constant::InvokeDynamic {
                            bootstrap: a,
                            name_and_type: b,
                        },
                        false,
                    )
                })
                .map_err(&t)?,
            19 => u16_(r).map(|(r, v)| (r, Constant::Module(v), false)).map_err(&t)?,
            20 => u16_(r).map(|(r, v)| (r, Constant::Package(v), false)).map_err(&t)?,
            other => return Err(p.err(at, format!("unknown constant-pool tag {other} at entry {}", pool.len()))),
        };
        pool.push(c);
        if wide {
            pool.push(Constant::Unusable);
        }
        i = r;
    }
    Ok((i, pool))
}

/// Parses the bare constant-pool entries that JVMTI's `GetConstantPool`
/// returns (no count, no header); slot 0 is `Unusable` as in a class file.
pub fn parse_constant_pool(bytes: &[u8]) -> Result<Vec<Constant>, ClassFileError> {
    let p = Parser_ { all: bytes };
    read_pool(&p, bytes, None).map(|(_, pool)| pool)
}

/// Resolves a Utf8 constant of `pool`.
pub fn pool_utf8(pool: &[Constant], idx: u16) -> Option<&str> {
    match pool.get(idx as usize) {
        Some(Constant::Utf8(s)) => Some(s),
        _ => None,
    }
}

/// The internal name of the class constant `idx` (`java/lang/String`, or an
/// array's descriptor `[I`).
pub fn pool_class_name(pool: &[Constant], idx: u16) -> Option<&str> {
    match pool.get(idx as usize)? {
        Constant::Class(n) => pool_utf8(pool, *n),
        _ => None,
    }
}

/// `(class, name, descriptor)` of a Field/Method/InterfaceMethod ref in `pool`;
/// for an InvokeDynamic entry, `("", name, descriptor)`.
pub fn pool_member_ref(pool: &[Constant], idx: u16) -> Option<(&str, &str, &str)> {
    let (class, nat) = match pool.get(idx as usize)? {
        Constant::Fieldref { class, name_and_type }
        | Constant::Methodref { class, name_and_type }
        | Constant::InterfaceMethodref { class, name_and_type } => (Some(*class), *name_and_type),
        Constant::InvokeDynamic { name_and_type, .. } => (None, *name_and_type),
        _ => return None,
    };
    let class = match class {
        None => "",
        Some(c) => pool_class_name(pool, c)?,
    };
    match pool.get(nat as usize)? {
        Constant::NameAndType { name, descriptor } => {
            Some((class, pool_utf8(pool, *name)?, pool_utf8(pool, *descriptor)?))
        }
        _ => None,
    }
}

/// Parses a whole class file.
pub fn parse_class<'a>(bytes: &'a [u8]) -> Result<ClassFile, ClassFileError> {
    let p = Parser_ { all: bytes };
    let i = bytes;
    let (i, magic) = u32_(i).map_err(p.truncated(i, "header"))?;
    if magic != 0xCAFE_BABE {
        return Err(ClassFileError {
            offset: 0,
            message: format!("not a class file (magic 0x{magic:08x})"),
        });
    }
    let (i, (minor, major)) = (be_u16, be_u16).parse(i).map_err(p.truncated(i, "header"))?;
    let (i, cp_count) = u16_(i).map_err(p.truncated(i, "header"))?;
    let (i, pool) = read_pool(&p, i, Some(cp_count as usize))?;
    if pool.len() != cp_count as usize {
        return Err(p.err(i, "a long or double constant overruns the constant pool"));
    }
    let utf8 = |idx: u16, at: &[u8]| -> Result<String, ClassFileError> {
        match pool.get(idx as usize) {
            Some(Constant::Utf8(s)) => Ok(s.clone()),
            _ => Err(p.err(at, format!("constant {idx} is not a Utf8 entry"))),
        }
    };
    let class_name = |idx: u16, at: &[u8]| -> Result<String, ClassFileError> {
        match pool.get(idx as usize) {
            Some(Constant::Class(n)) => utf8(*n, at),
            _ => Err(p.err(at, format!("constant {idx} is not a Class entry"))),
        }
    };
    let at = i;
    let (i, (access, this_idx, super_idx, n_ifaces)) = (be_u16, be_u16, be_u16, be_u16)
        .parse(i)
        .map_err(p.truncated(at, "class header"))?;
    let this_class = class_name(this_idx, at)?;
    let super_class = if super_idx == 0 {
        None
    } else {
        Some(class_name(super_idx, at)?)
    };
    let mut interfaces = Vec::new();
    let mut i = i;
    for _ in 0..n_ifaces {
        let (r, idx) = u16_(i).map_err(p.truncated(i, "interface list"))?;
        interfaces.push(class_name(idx, i)?);
        i = r;
    }
    // Fields and methods share a layout: access, name, descriptor, attributes.
    let members = |mut i: &'a [u8], what: &str| -> Result<(&'a [u8], Vec<Member>), ClassFileError> {
        let (r, n) = u16_(i).map_err(p.truncated(i, what))?;
        i = r;
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let at = i;
            let (r, (acc, name, desc, n_attr)) = (be_u16, be_u16, be_u16, be_u16)
                .parse(i)
                .map_err(p.truncated(at, what))?;
            let name = utf8(name, at)?;
            let desc = utf8(desc, at)?;
            i = r;
            let mut code = None;
            for _ in 0..n_attr {
                let at = i;
                let (r, (attr_name, len)) = (be_u16, be_u32).parse(i).map_err(p.truncated(at, "attribute"))?;
                let (r, body) = take::<_, _, nom::error::Error<&[u8]>>(len)
                    .parse(r)
                    .map_err(p.truncated(at, "attribute"))?;
                if utf8(attr_name, at)? == "Code" {
                    code = Some(parse_code(&p, body, &name)?);
                }
                i = r;
            }
            out.push((acc, name, desc, code));
        }
        Ok((i, out))
    };
    let (i, fields) = members(i, "field table")?;
    let (i, methods) = members(i, "method table")?;
    // Class attributes are skipped but must be well-formed.
    let (mut i, n_attr) = u16_(i).map_err(p.truncated(i, "class attributes"))?;
    for _ in 0..n_attr {
        let at = i;
        let (r, (_, len)) = (be_u16, be_u32).parse(i).map_err(p.truncated(at, "class attribute"))?;
        let (r, _) = take::<_, _, nom::error::Error<&[u8]>>(len)
            .parse(r)
            .map_err(p.truncated(at, "class attribute"))?;
        i = r;
    }
    if !i.is_empty() {
        return Err(p.err(i, format!("{} bytes after the end of the class file", i.len())));
    }
    Ok(ClassFile {
        minor,
        major,
        constant_pool: pool,
        access,
        this_class,
        super_class,
        interfaces,
        fields: fields
            .into_iter()
            .map(|(access, name, descriptor, _)| Field {
                access,
                name,
                descriptor,
            })
            .collect(),
        methods: methods
            .into_iter()
            .map(|(access, name, descriptor, code)| Method {
                access,
                name,
                descriptor,
                code,
            })
            .collect(),
    })
}

fn parse_code(p: &Parser_<'_>, body: &[u8], method: &str) -> Result<Code, ClassFileError> {
    let what = format!("Code attribute of {method}");
    let (r, (max_stack, max_locals, len)) = (be_u16, be_u16, be_u32).parse(body).map_err(p.truncated(body, &what))?;
    let (r, code) = take::<_, _, nom::error::Error<&[u8]>>(len)
        .parse(r)
        .map_err(p.truncated(body, &what))?;
    let (mut r, n_ex) = u16_(r).map_err(p.truncated(body, &what))?;
    let mut exception_table = Vec::with_capacity(n_ex as usize);
    for _ in 0..n_ex {
        let (r2, e) = (be_u16, be_u16, be_u16, be_u16)
            .parse(r)
            .map_err(p.truncated(r, &what))?;
        exception_table.push(e);
        r = r2;
    }
    Ok(Code {
        max_stack,
        max_locals,
        bytecode: code.to_vec(),
        exception_table,
    })
}

impl ClassFile {
    /// The method with this name and descriptor.
    pub fn method(&self, name: &str, descriptor: &str) -> Option<&Method> {
        self.methods
            .iter()
            .find(|m| m.name == name && m.descriptor == descriptor)
    }

    /// Resolves a Utf8 constant.
    pub fn utf8(&self, idx: u16) -> Option<&str> {
        pool_utf8(&self.constant_pool, idx)
    }

    /// `(class, name, descriptor)` of a Field/Method/InterfaceMethod ref.
    pub fn member_ref(&self, idx: u16) -> Option<(&str, &str, &str)> {
        pool_member_ref(&self.constant_pool, idx)
    }
}

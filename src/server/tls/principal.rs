//! The principal a client certificate maps to. (Stand-in while the mapping is written:
//! `DEFAULT` rules only.)

use rustls_pki_types::CertificateDer;

#[derive(Debug, thiserror::Error)]
#[error("cannot read the certificate's subject")]
pub struct CertificateNameError;

#[derive(Debug, thiserror::Error)]
#[error("ssl.principal.mapping.rules: only DEFAULT is read yet")]
pub struct MappingRulesError;

#[derive(Debug, thiserror::Error)]
#[error("no rule of ssl.principal.mapping.rules matches {0}")]
pub struct NoMatchingRule(pub String);

pub fn subject_name(cert: &CertificateDer<'_>) -> Result<String, CertificateNameError> {
    let (_, parsed) =
        x509_parser::parse_x509_certificate(cert.as_ref()).map_err(|_| CertificateNameError)?;
    Ok(parsed.subject().to_string())
}

#[derive(Debug, Clone)]
pub struct PrincipalMapper;

impl PrincipalMapper {
    pub fn parse(rules: &str) -> Result<PrincipalMapper, MappingRulesError> {
        if rules.trim() == "DEFAULT" {
            Ok(PrincipalMapper)
        } else {
            Err(MappingRulesError)
        }
    }

    pub fn map(&self, name: &str) -> Result<String, NoMatchingRule> {
        Ok(name.to_string())
    }
}
